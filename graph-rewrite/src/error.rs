//! The error type of `graph-rewrite`.

use std::fmt;
use std::io;

use graph_core::Key;

/// Everything that can go wrong building rules, reading a rules file or
/// rewriting a graph.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rule's right-hand side uses a variable that its left-hand side does
    /// not bind, so there would be nothing to put in its place.
    #[error(
        "variable `{var}` appears in the right-hand side but not in the left-hand side `{lhs}`"
    )]
    UnboundVariable {
        /// The variable's name.
        var: Box<str>,
        /// The left-hand side, as text.
        lhs: String,
    },
    /// A problem with one rule of a rule set or rules file.
    #[error("rules[{index}]: {error}")]
    InRule {
        /// The rule's position, from 0.
        index: usize,
        /// What is wrong with it.
        error: Box<Error>,
    },
    /// A rewritten task refers to a key that no task of the graph has.
    #[error("task {key}: rewritten term refers to missing key {missing}")]
    MissingKey {
        /// The rewritten task.
        key: Key,
        /// The key it would refer to.
        missing: Key,
    },
    /// The rewritten graph is not a DAG (a rewrite added a reference that closes
    /// a cycle), as reported by `graph-core`.
    #[error("rewritten graph: {0}")]
    Graph(graph_core::Error),
    /// A rewritten term nests deeper than every command can read back and
    /// run.
    #[error(
        "task {key}: the rewritten term nests {levels} levels deep, more than the limit of {}",
        graph_core::MAX_NESTING
    )]
    TooDeep {
        /// The task.
        key: Key,
        /// How deep the rewrite made it.
        levels: usize,
    },
    /// A rules file that is not JSON at all.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The JSON parser's description.
        message: String,
    },
    /// JSON that is not a rules file: `{"rules": [{"lhs": TERM, "rhs": TERM}, ...]}`.
    #[error("{path}: {problem}")]
    Invalid {
        /// Where: a JSON path such as `rules[2].lhs.args[0]`.
        path: String,
        /// What is wrong there.
        problem: RulesProblem,
    },
    /// Reading a rules file failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// An error in a named input (a file, or `<stdin>`).
    #[error("{origin}: {error}")]
    In {
        /// The file's path, or `<stdin>`.
        origin: String,
        /// The error.
        error: Box<Error>,
    },
}

/// What is wrong with a rules file that parses as JSON.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RulesProblem {
    /// The document or a rule is not a JSON object.
    NotAnObject,
    /// A required field is absent.
    MissingField {
        /// The field.
        field: &'static str,
    },
    /// A field a rule or term does not have.
    UnknownField {
        /// The field.
        field: String,
    },
    /// A value of the wrong JSON kind.
    Expected {
        /// What was expected there.
        expected: &'static str,
    },
    /// A term object that is none of the term forms.
    BadTerm,
    /// A key that is not a string, a number or an array of those.
    BadKey {
        /// The parser's description.
        message: String,
    },
    /// An integer that does not fit in 64 signed bits.
    IntegerOutOfRange,
}

impl fmt::Display for RulesProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RulesProblem::NotAnObject => f.write_str("expected a JSON object"),
            RulesProblem::MissingField { field } => write!(f, "missing field `{field}`"),
            RulesProblem::UnknownField { field } => write!(f, "unknown field `{field}`"),
            RulesProblem::Expected { expected } => write!(f, "expected {expected}"),
            RulesProblem::BadTerm => f.write_str(
                "a term object is {\"var\": NAME}, {\"ref\": KEY}, {\"call\": OP, \"args\": [TERM, ...]} or {\"list\": [TERM, ...]}",
            ),
            RulesProblem::BadKey { message } => write!(f, "bad key: {message}"),
            RulesProblem::IntegerOutOfRange => {
                f.write_str("integer does not fit in a signed 64-bit integer")
            }
        }
    }
}
