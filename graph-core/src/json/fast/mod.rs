//! The fast reader of `taskgraph-json/1`: one pass over the bytes, streamed
//! from a file (gzip or not) or a buffer, with no intermediate JSON values;
//! strings interned, keys read as compact codes (a reference is looked up by
//! its code, no key built), keys shared with the tasks they name, and
//! references resolved to node ids as they are read.
//!
//! It reads every valid document. On anything else it gives up ([`Bail`]),
//! and the serde reader, which reports problems exactly (line, column, task
//! and key), reads the document again: errors cost a second reading,
//! valid documents only one. An integer that does not fit in 64 signed bits
//! is the one problem it reports itself, since serde's reader would read one
//! past `u64` as a float.

mod input;
mod reader;
mod sink;

pub(crate) use self::input::is_json_number;
pub(crate) use self::reader::Reader;
pub(crate) use self::sink::{GraphSink, ShapeSink};

use super::error::TaskAt;

/// Why the fast reader stopped.
#[derive(Debug)]
pub(crate) enum Bail {
    /// Something it does not read: the document is not valid (or reading it
    /// failed); the serde reader says what is wrong.
    Invalid,
    /// An integer literal that does not fit in 64 signed bits (64 unsigned
    /// bits for a size).
    BigInteger {
        /// The literal.
        digits: String,
        /// What it does not fit in: "a signed 64-bit integer" or "an
        /// unsigned 64-bit integer".
        range: &'static str,
        /// The offset of its last digit in the (uncompressed) text.
        last: u64,
        /// The task it is in.
        task: TaskAt,
    },
    /// A string longer than its limit, given up on before holding more of
    /// it.
    TooLong(TooLong),
}

/// Where a string longer than its limit starts, and what it is.
#[derive(Debug)]
pub(crate) struct TooLong {
    /// What it is (see [`Problem::TooLong`](super::Problem::TooLong)).
    what: &'static str,
    limit: usize,
    /// The offset of its first byte in the (uncompressed) text.
    pub(crate) start: u64,
    /// The task it is in, if any.
    task: Option<TaskAt>,
}

impl TooLong {
    /// The error, the string starting at `line` and `column`.
    pub(crate) fn at(self, line: usize, column: usize) -> super::Error {
        super::Error::Invalid {
            line,
            column,
            task: self.task,
            problem: super::Problem::TooLong {
                what: self.what,
                limit: self.limit,
            },
        }
    }
}

/// How long a string read whole may be, and what it is, for the error.
#[derive(Clone, Copy)]
pub(crate) struct Limit {
    what: &'static str,
    bytes: usize,
}

/// Field names and the format's name.
const FIELD_NAME: Limit = Limit {
    what: "a field name",
    bytes: super::MAX_NAME_BYTES,
};
const KEY: Limit = Limit {
    what: "a string in a key",
    bytes: super::MAX_NAME_BYTES,
};
const OP_NAME: Limit = Limit {
    what: "an op name",
    bytes: super::MAX_NAME_BYTES,
};
const LITERAL: Limit = Limit {
    what: "a string literal",
    bytes: super::MAX_STRING_BYTES,
};

type Result<T> = std::result::Result<T, Bail>;

/// The ranges of [`Bail::BigInteger`].
const SIGNED: &str = "a signed 64-bit integer";
const UNSIGNED: &str = "an unsigned 64-bit integer";
