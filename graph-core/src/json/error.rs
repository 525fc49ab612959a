//! The error of reading and writing `taskgraph-json/1`: where in the text,
//! in which task, and what; or the graph error a file's tasks make.

use std::fmt;
use std::io;

use crate::Key;

/// What can go wrong reading or writing a graph file: text that is not
/// JSON, JSON that is not `taskgraph-json/1`, a float JSON cannot spell,
/// input or output that fails, or a graph that cannot be built from the
/// tasks read ([`crate::Error`]: a duplicate key, a missing dependency, a
/// cycle).
///
/// Messages name tasks by their key in Python's spelling, so they read the way
/// a dask user writes keys.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
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
    /// A top-level field a writer cannot add: one of the format's own
    /// (`format`, `tasks`), or one given twice.
    #[error(
        "cannot write the top-level field {name:?}: `format` and `tasks` are the format's own, and each field is written once"
    )]
    Field {
        /// The field's name.
        name: String,
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
    /// The tasks read do not make a graph.
    #[error(transparent)]
    Graph(#[from] crate::Error),
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
    /// Terms or keys nested deeper than [`MAX_NESTING`](crate::MAX_NESTING).
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// A string longer than the format allows there
    /// ([`MAX_NAME_BYTES`](crate::MAX_NAME_BYTES) in a key, an op or a field
    /// name; [`MAX_STRING_BYTES`](crate::MAX_STRING_BYTES) in a term).
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
