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

use super::error::TaskAt;
use super::source::Source;
use super::{FORMAT, GROW_EVERY, MAX_NESTING, RED_ZONE, STACK_SEGMENT};
use crate::graph::{Body, Task};
use crate::key_table::{self, KeyTable};
use crate::{Key, NodeId, Op, Shape, TaskGraph, Term, Topology, Value};

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

/// The most bytes of a skipped string held at once.
const SKIP_WINDOW: usize = 1 << 16;

/// The ranges of [`Bail::BigInteger`].
const SIGNED: &str = "a signed 64-bit integer";
const UNSIGNED: &str = "an unsigned 64-bit integer";

/// What a reader does with each task it reads.
pub(crate) trait Sink {
    /// Whether it wants the terms (else only their references).
    const TERMS: bool;

    /// The next task: its key and body, and its metadata. Called only when
    /// the sink wants terms.
    fn task(&mut self, key: &Key, body: Body, size: Option<u64>, cost: Option<f64>) -> Result<()>;

    /// Room for about `tasks` more tasks, asked for once the reader can
    /// tell how many the document holds.
    fn reserve(&mut self, tasks: usize) {
        let _ = tasks;
    }
}

/// The bytes of a document, a chunk at a time.
struct Input<I> {
    source: I,
    buf: Vec<u8>,
    pos: usize,
    /// `buf.len()`.
    len: usize,
    /// Bytes before `buf[0]`.
    consumed: u64,
    done: bool,
}

impl<I: Source> Input<I> {
    fn new(source: I) -> Input<I> {
        Input {
            source,
            buf: Vec::new(),
            pos: 0,
            len: 0,
            consumed: 0,
            done: false,
        }
    }

    /// Reads the next chunk; `false` at the end.
    #[cold]
    fn refill(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        self.consumed += self.len as u64;
        self.pos = 0;
        self.source
            .next_chunk(&mut self.buf)
            .map_err(|_| Bail::Invalid)?;
        self.len = self.buf.len();
        self.done = self.len == 0;
        Ok(!self.done)
    }

    #[inline]
    fn peek(&mut self) -> Result<Option<u8>> {
        if self.pos == self.len && !self.refill()? {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    #[inline]
    fn next(&mut self) -> Result<u8> {
        match self.peek()? {
            Some(byte) => {
                self.pos += 1;
                Ok(byte)
            }
            None => Err(Bail::Invalid),
        }
    }

    /// The next byte that is not white space, not consumed.
    #[inline]
    fn peek_token(&mut self) -> Result<Option<u8>> {
        loop {
            while self.pos < self.len {
                match self.buf[self.pos] {
                    b' ' | b'\n' | b'\r' | b'\t' => self.pos += 1,
                    byte => return Ok(Some(byte)),
                }
            }
            if !self.refill()? {
                return Ok(None);
            }
        }
    }

    /// The next byte that is not white space, consumed.
    #[inline]
    fn token(&mut self) -> Result<u8> {
        match self.peek_token()? {
            Some(byte) => {
                self.pos += 1;
                Ok(byte)
            }
            None => Err(Bail::Invalid),
        }
    }

    fn expect(&mut self, byte: u8) -> Result<()> {
        if self.token()? == byte {
            Ok(())
        } else {
            Err(Bail::Invalid)
        }
    }

    /// The offset of the next byte in the whole text.
    fn offset(&self) -> u64 {
        self.consumed + self.pos as u64
    }

    /// A string's bytes (its opening quote consumed) into `out`, escapes
    /// decoded; checked to be UTF-8, and to be no longer than `limit`.
    fn string(&mut self, out: &mut Vec<u8>, limit: Limit) -> Result<()> {
        let ascii = self.raw_string(out, limit)?;
        if !ascii && std::str::from_utf8(out).is_err() {
            return Err(Bail::Invalid);
        }
        Ok(())
    }

    /// Passes over a string (its opening quote consumed), checked as
    /// [`Input::string`] checks it, copied into `scratch` only when it has
    /// escapes or runs past the end of the chunk.
    fn skip_string(&mut self, scratch: &mut Vec<u8>) -> Result<()> {
        let start = self.pos;
        let ascii = self.plain_run();
        if self.pos < self.len && self.buf[self.pos] == b'"' {
            if !ascii && std::str::from_utf8(&self.buf[start..self.pos]).is_err() {
                return Err(Bail::Invalid);
            }
            self.pos += 1;
            return Ok(());
        }
        // An escape, a control byte or the end of the chunk: the long way,
        // from the start (still in this chunk), holding at most a window of
        // the string (an ignored field may hold gigabytes).
        self.pos = start;
        scratch.clear();
        loop {
            let start = self.pos;
            self.plain_run();
            scratch.extend_from_slice(&self.buf[start..self.pos]);
            match self.peek()? {
                None => return Err(Bail::Invalid),
                Some(b'"') => {
                    self.pos += 1;
                    return std::str::from_utf8(scratch)
                        .map(drop)
                        .map_err(|_| Bail::Invalid);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(scratch)?;
                }
                Some(byte) if byte < 0x20 => return Err(Bail::Invalid),
                Some(_) => {}
            }
            if scratch.len() >= SKIP_WINDOW {
                // Checked and dropped, but for a character cut in two at
                // its end, which the next piece completes.
                let checked = match std::str::from_utf8(scratch) {
                    Ok(_) => scratch.len(),
                    Err(err) if err.error_len().is_none() => err.valid_up_to(),
                    Err(_) => return Err(Bail::Invalid),
                };
                scratch.drain(..checked);
            }
        }
    }

    /// [`Input::string`] without the UTF-8 check, for bytes that are checked
    /// otherwise: compared with names, or interned (which checks new
    /// texts). Whether its raw bytes (escapes aside) were all ASCII.
    /// Longer than `limit`, it is given up on ([`Bail::TooLong`]) as soon
    /// as that is known, holding no more of it.
    fn raw_string(&mut self, out: &mut Vec<u8>, limit: Limit) -> Result<bool> {
        out.clear();
        let first = self.offset();
        let mut ascii = true;
        loop {
            let start = self.pos;
            ascii &= self.plain_run();
            // Escapes decode to at most 4 bytes: checked before the next
            // run, the string holds at most `limit` + 4 bytes.
            if out.len() + (self.pos - start) > limit.bytes {
                return Err(Bail::TooLong(TooLong {
                    what: limit.what,
                    limit: limit.bytes,
                    start: first,
                    task: None,
                }));
            }
            out.extend_from_slice(&self.buf[start..self.pos]);
            match self.peek()? {
                None => return Err(Bail::Invalid),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(ascii);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(out)?;
                }
                Some(byte) if byte < 0x20 => return Err(Bail::Invalid),
                Some(_) => {}
            }
        }
    }

    /// Passes over the run of plain string bytes (no quote, backslash or
    /// control byte) from `pos` in this chunk, eight at a time; whether they
    /// were all ASCII.
    #[inline]
    fn plain_run(&mut self) -> bool {
        let mut high = 0;
        while let Some(bytes) = self.buf.get(self.pos..self.pos + 8) {
            let word = u64::from_le_bytes(bytes.try_into().expect("eight bytes"));
            if ends_plain_run(word) {
                break;
            }
            high |= word;
            self.pos += 8;
        }
        while self.pos < self.len {
            let byte = self.buf[self.pos];
            if byte == b'"' || byte == b'\\' || byte < 0x20 {
                break;
            }
            high |= u64::from(byte);
            self.pos += 1;
        }
        high & HIGH_BITS == 0
    }

    /// One escape (after its backslash), decoded into `out`.
    fn escape(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let decoded = match self.next()? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let unit = self.hex4()?;
                let code = match unit {
                    0xd800..=0xdbff => {
                        // A high surrogate must be followed by a low one.
                        if self.next()? != b'\\' || self.next()? != b'u' {
                            return Err(Bail::Invalid);
                        }
                        let low = self.hex4()?;
                        if !(0xdc00..=0xdfff).contains(&low) {
                            return Err(Bail::Invalid);
                        }
                        0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                    }
                    0xdc00..=0xdfff => return Err(Bail::Invalid),
                    unit => unit,
                };
                let c = char::from_u32(code).ok_or(Bail::Invalid)?;
                let mut utf8 = [0_u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                return Ok(());
            }
            _ => return Err(Bail::Invalid),
        };
        out.push(decoded);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32> {
        let mut value = 0;
        for _ in 0..4 {
            let digit = (self.next()? as char).to_digit(16).ok_or(Bail::Invalid)?;
            value = value * 16 + digit;
        }
        Ok(value)
    }

    /// A number (its first byte not consumed), in `text`.
    fn number(&mut self, text: &mut Vec<u8>) -> Result<Number> {
        text.clear();
        let mut float = false;
        while let Some(byte) = self.peek()? {
            match byte {
                b'0'..=b'9' | b'-' => {}
                b'.' | b'e' | b'E' | b'+' => float = true,
                _ => break,
            }
            text.push(byte);
            self.pos += 1;
        }
        if !is_json_number(text) {
            return Err(Bail::Invalid);
        }
        let text = std::str::from_utf8(text).expect("digits and signs are ASCII");
        if float {
            let value: f64 = text.parse().map_err(|_| Bail::Invalid)?;
            // serde_json refuses a float out of range; so does the reader
            // of record, which then says so.
            if !value.is_finite() {
                return Err(Bail::Invalid);
            }
            Ok(Number::Float(value))
        } else {
            match text.parse::<i64>() {
                Ok(value) => Ok(Number::Int(value)),
                Err(_) => Ok(Number::Big),
            }
        }
    }

    /// Consumes `rest` (the bytes after a literal's first).
    fn word(&mut self, rest: &[u8]) -> Result<()> {
        for &byte in rest {
            if self.next()? != byte {
                return Err(Bail::Invalid);
            }
        }
        Ok(())
    }
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Whether any of the eight bytes of `word` is a quote, a backslash or a
/// control byte (below 0x20): the classic tests for "some byte is zero"
/// (`(v - 0x01..) & !v & 0x80..`) and "some byte is below n", both exact as
/// yes-or-no answers.
#[inline]
fn ends_plain_run(word: u64) -> bool {
    let zero_byte = |v: u64| v.wrapping_sub(LOW_BITS) & !v & HIGH_BITS;
    let quote = zero_byte(word ^ (LOW_BITS * u64::from(b'"')));
    let backslash = zero_byte(word ^ (LOW_BITS * u64::from(b'\\')));
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS;
    quote | backslash | control != 0
}

/// Whether `text` follows JSON's grammar of numbers:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub(crate) fn is_json_number(text: &[u8]) -> bool {
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < text.len() && text[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if text.first() == Some(&b'-') {
        i += 1;
    }
    match text.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if text.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(text.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == text.len()
}

enum Number {
    Int(i64),
    Float(f64),
    /// An integer that does not fit in 64 signed bits.
    Big,
}

/// The reader: the input, the keys read so far, the references resolved
/// so far, and where it is.
pub(crate) struct Reader<I> {
    input: Input<I>,
    /// Every task's key, by node, when the sink keeps terms (a reference
    /// shares its task's key); and the table that finds a node by the code of
    /// its key (strings and op names are interned there too).
    keys: Vec<Key>,
    table: KeyTable,
    /// The dependencies of each task so far, in CSR form: node `i`'s are
    /// `targets[offsets[i]..offsets[i + 1]]`; `u32::MAX` for a reference
    /// forward, resolved at the end.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    /// The references forward: their place in `targets`, and where their
    /// codes end in `forward_codes`.
    forward: Vec<(usize, usize)>,
    forward_codes: Vec<u8>,
    /// When the sink wants no terms: whether each task is a literal value
    /// (no reference, no call), and the calls met so far.
    literal: Vec<bool>,
    /// When the sink wants no terms: each task's size, from the first task
    /// that has one on (empty until then).
    sizes: Vec<Option<u64>>,
    calls: u64,
    /// The code of the key being read, and of the key of the task being
    /// read (if `has_key`).
    code: Vec<u8>,
    task_code: Vec<u8>,
    has_key: bool,
    scratch: Vec<u8>,
    number: Vec<u8>,
    /// The terms of the arrays being read, innermost last: an array's items
    /// are gathered here and moved into a vector of their exact length, one
    /// allocation an array instead of one a doubling.
    items: Vec<Term>,
    /// The same for the keys of `deps`.
    dep_keys: Vec<Key>,
    /// The position of the task being read.
    index: usize,
    depth: usize,
    /// About how many bytes the document has, if known.
    size_hint: Option<u64>,
}

/// What a document holds, besides what its sink kept: the table of its
/// keys' codes, the checked topology, and (for a sink without terms) which
/// tasks are literal values.
pub(crate) struct Document {
    pub(crate) table: KeyTable,
    pub(crate) literal: Vec<bool>,
    /// For a sink without terms: each task's size, or empty if none has one.
    pub(crate) sizes: Vec<Option<u64>>,
    pub(crate) topology: Topology,
}

/// Bytes of text per task, at least, when reserving room from the size of a
/// document (`{"key":1,"task":1},` is 20), and bytes per reference (`{"ref":1}`
/// is 9): room in vectors, which is address space until used.
const BYTES_PER_TASK: u64 = 20;
const BYTES_PER_REFERENCE: u64 = 10;
/// The room in the index of keys at the start: once the tasks read fill it,
/// the bytes they took tell how many the document holds (`make_room`).
const SAMPLE_TASKS: usize = 1024;

impl<I: Source> Reader<I> {
    /// A reader of `source`, with room reserved for a document of about
    /// `size_hint` bytes (room is address space until used).
    pub(crate) fn new(source: I, size_hint: Option<u64>) -> Reader<I> {
        let room = |per: u64| {
            size_hint.map_or(0, |bytes| {
                usize::try_from(bytes / per).unwrap_or(usize::MAX)
            })
        };
        let tasks = room(BYTES_PER_TASK).min(NodeId::MAX_NODES);
        // Room only asked for (see `KeyTable::with_capacity`).
        let reserved = |room: usize| {
            let mut vec = Vec::new();
            let _ = vec.try_reserve_exact(room);
            vec
        };
        let mut offsets = reserved(tasks + 1);
        offsets.push(0);
        Reader {
            input: Input::new(source),
            keys: Vec::new(),
            // The index's room costs memory at once: enough for a sample,
            // then as much as the tasks read so far tell (`make_room`).
            table: KeyTable::with_capacity(tasks, 8 * tasks, tasks.min(SAMPLE_TASKS)),
            offsets,
            targets: reserved(room(BYTES_PER_REFERENCE)),
            forward: Vec::new(),
            forward_codes: Vec::new(),
            literal: Vec::new(),
            sizes: Vec::new(),
            calls: 0,
            code: Vec::new(),
            task_code: Vec::new(),
            has_key: false,
            scratch: Vec::new(),
            number: Vec::new(),
            items: Vec::new(),
            dep_keys: Vec::new(),
            index: 0,
            depth: 0,
            size_hint,
        }
    }

    /// Reads a whole document into `sink`.
    pub(crate) fn read<S: Sink>(mut self, sink: &mut S) -> Result<Document> {
        // A byte order mark is passed over, as the serde reader does.
        if self.input.peek()? == Some(0xef) {
            self.input.word(b"\xef\xbb\xbf")?;
        }
        self.input.expect(b'{')?;
        let (mut format, mut tasks) = (false, false);
        self.fields(|reader| {
            reader.input.expect(b'"')?;
            reader.input.string(&mut reader.scratch, FIELD_NAME)?;
            reader.input.expect(b':')?;
            match reader.scratch.as_slice() {
                b"format" => {
                    reader.input.expect(b'"')?;
                    reader.input.string(&mut reader.scratch, FIELD_NAME)?;
                    if reader.scratch != FORMAT.as_bytes() {
                        return Err(Bail::Invalid);
                    }
                    format = true;
                }
                b"tasks" if !tasks => {
                    reader.tasks(sink)?;
                    tasks = true;
                }
                b"tasks" => return Err(Bail::Invalid),
                _ => reader.skip_value()?,
            }
            Ok(())
        })?;
        if !(format && tasks) || self.input.peek_token()?.is_some() {
            return Err(Bail::Invalid);
        }
        self.finish()
    }

    /// Resolves the references forward and checks the topology: a missing
    /// key or a cycle gives up (the serde reader then reports it).
    fn finish(mut self) -> Result<Document> {
        let mut start = 0;
        for &(at, end) in &self.forward {
            let code = &self.forward_codes[start..end];
            self.targets[at] = self.table.find(code).ok_or(Bail::Invalid)?;
            start = end;
        }
        let topology = Topology::from_dependency_rows(self.offsets, self.targets)
            .map_err(|_| Bail::Invalid)?;
        if !self.sizes.is_empty() {
            self.sizes.resize(self.literal.len(), None);
        }
        Ok(Document {
            table: self.table,
            literal: self.literal,
            sizes: self.sizes,
            topology,
        })
    }

    /// Skips any JSON value, without recursion (fields the format ignores).
    fn skip_value(&mut self) -> Result<()> {
        let mut open: Vec<u8> = Vec::new();
        loop {
            match self.input.token()? {
                b'{' => {
                    if self.input.peek_token()? == Some(b'}') {
                        self.input.pos += 1;
                    } else {
                        open.push(b'}');
                        self.field_name()?;
                        continue;
                    }
                }
                b'[' => {
                    if self.input.peek_token()? == Some(b']') {
                        self.input.pos += 1;
                    } else {
                        open.push(b']');
                        continue;
                    }
                }
                b'"' => self.input.skip_string(&mut self.scratch)?,
                b't' => self.input.word(b"rue")?,
                b'f' => self.input.word(b"alse")?,
                b'n' => self.input.word(b"ull")?,
                b'-' | b'0'..=b'9' => {
                    self.input.pos -= 1;
                    self.input.number(&mut self.number)?;
                }
                _ => return Err(Bail::Invalid),
            }
            // The value is done: close what it completes.
            loop {
                let Some(&close) = open.last() else {
                    return Ok(());
                };
                match self.input.token()? {
                    b',' => {
                        if close == b'}' {
                            self.field_name()?;
                        }
                        break;
                    }
                    byte if byte == close => {
                        open.pop();
                    }
                    _ => return Err(Bail::Invalid),
                }
            }
        }
    }

    /// `"name":`, the name ignored.
    fn field_name(&mut self) -> Result<()> {
        self.input.expect(b'"')?;
        let name = self.input.string(&mut self.scratch, FIELD_NAME);
        self.in_task(name)?;
        self.input.expect(b':')
    }

    /// `"name":`, the name in `scratch`, unchecked (the caller compares it
    /// with the names it knows, all ASCII).
    fn known_field_name(&mut self) -> Result<()> {
        self.input.expect(b'"')?;
        let name = self.input.raw_string(&mut self.scratch, FIELD_NAME);
        self.in_task(name)?;
        self.input.expect(b':')
    }

    /// `read`'s result, a string too long named with the task being read.
    fn in_task<T>(&self, read: Result<T>) -> Result<T> {
        read.map_err(|bail| match bail {
            Bail::TooLong(long) => Bail::TooLong(TooLong {
                task: Some(TaskAt {
                    index: self.index,
                    key: self.has_key.then(|| self.table.decode(&self.task_code)),
                }),
                ..long
            }),
            other => other,
        })
    }

    fn tasks<S: Sink>(&mut self, sink: &mut S) -> Result<()> {
        self.input.expect(b'[')?;
        self.elements(|reader| {
            reader.task(sink)?;
            reader.index += 1;
            if reader.table.index_is_full() {
                reader.make_room(sink);
            }
            Ok(())
        })
    }

    /// Room in the index of keys and in the sink for as many tasks as those
    /// read so far say the document holds, at the bytes a task they took,
    /// asked for when the index is full: it then grows once or twice to
    /// about the document's size instead of doubling a dozen times (each
    /// growth hashes every key again; of the sink's graph, copies every
    /// task), and no room is taken for tasks that are not there.
    fn make_room<S: Sink>(&mut self, sink: &mut S) {
        let (Some(total), read) = (self.size_hint, self.input.offset()) else {
            return;
        };
        if read == 0 || total <= read {
            return;
        }
        let per_task = read as f64 / self.index as f64;
        // A tenth more, for the tasks to come taking fewer bytes.
        let more = ((total - read) as f64 / per_task * 1.1) as usize;
        let more = more.min(NodeId::MAX_NODES - self.index);
        self.table.reserve_index(more);
        sink.reserve(more);
    }

    /// The fields of an object whose `{` has been read, at least one, each
    /// read (name and value) by `each`, up to and with the closing `}`.
    #[inline]
    fn fields(&mut self, mut each: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        if self.input.peek_token()? == Some(b'}') {
            return Err(Bail::Invalid);
        }
        loop {
            each(self)?;
            match self.input.token()? {
                b',' => {}
                b'}' => return Ok(()),
                _ => return Err(Bail::Invalid),
            }
        }
    }

    /// The elements of an array whose `[` has been read, each read by
    /// `each`, up to and with the closing `]`.
    #[inline]
    fn elements(&mut self, mut each: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        if self.input.peek_token()? == Some(b']') {
            self.input.pos += 1;
            return Ok(());
        }
        loop {
            each(self)?;
            match self.input.token()? {
                b',' => {}
                b']' => return Ok(()),
                _ => return Err(Bail::Invalid),
            }
        }
    }

    fn task<S: Sink>(&mut self, sink: &mut S) -> Result<()> {
        self.input.expect(b'{')?;
        let (mut body, mut size, mut cost) = (None, None, None);
        let mut literal = false;
        self.has_key = false;
        self.fields(|reader| {
            reader.known_field_name()?;
            match reader.scratch.as_slice() {
                b"key" if !reader.has_key => {
                    reader.code.clear();
                    reader.key_code()?;
                    std::mem::swap(&mut reader.code, &mut reader.task_code);
                    reader.has_key = true;
                }
                b"task" if body.is_none() => {
                    body = Some(if S::TERMS {
                        Body::Term(reader.term()?)
                    } else {
                        let (refs, calls) = (reader.targets.len(), reader.calls);
                        reader.refs()?;
                        literal = refs == reader.targets.len() && calls == reader.calls;
                        Body::Opaque(Vec::new())
                    });
                }
                b"deps" if body.is_none() => body = Some(Body::Opaque(reader.deps::<S>()?)),
                b"size" if size.is_none() => {
                    if !matches!(reader.input.peek_token()?, Some(b'0'..=b'9')) {
                        return Err(Bail::Invalid);
                    }
                    // A size is a u64, to 2^64 - 1.
                    size = Some(match reader.input.number(&mut reader.number)? {
                        Number::Int(n) => n as u64,
                        Number::Big => match std::str::from_utf8(&reader.number)
                            .ok()
                            .and_then(|digits| digits.parse().ok())
                        {
                            Some(size) => size,
                            None => return Err(reader.big_integer(UNSIGNED)),
                        },
                        Number::Float(_) => return Err(Bail::Invalid),
                    });
                }
                b"cost" if cost.is_none() => {
                    let token = reader.input.peek_token()?;
                    let seconds = match reader.number_token(token)? {
                        Number::Int(n) => n as f64,
                        Number::Float(x) => x,
                        Number::Big => return Err(Bail::Invalid),
                    };
                    if seconds < 0.0 {
                        return Err(Bail::Invalid);
                    }
                    cost = Some(seconds);
                }
                _ => return Err(Bail::Invalid),
            }
            Ok(())
        })?;
        let Some(body) = body.filter(|_| self.has_key) else {
            return Err(Bail::Invalid);
        };
        if self.offsets.len() >= NodeId::MAX_NODES || self.table.insert(&self.task_code).is_err() {
            return Err(Bail::Invalid);
        }
        let end = u32::try_from(self.targets.len()).map_err(|_| Bail::Invalid)?;
        self.offsets.push(end);
        if S::TERMS {
            let key = self.table.decode(&self.task_code);
            sink.task(&key, body, size, cost)?;
            self.keys.push(key);
        } else {
            if size.is_some() {
                self.sizes.resize(self.literal.len(), None);
                self.sizes.push(size);
            }
            self.literal.push(literal);
        }
        Ok(())
    }

    /// A number token that starts with `first` (not consumed), with a big
    /// integer reported.
    fn number_token(&mut self, first: Option<u8>) -> Result<Number> {
        if !matches!(first, Some(b'-' | b'0'..=b'9')) {
            return Err(Bail::Invalid);
        }
        let number = self.input.number(&mut self.number)?;
        if let Number::Big = number {
            return Err(self.big_integer(SIGNED));
        }
        Ok(number)
    }

    /// The integer just read does not fit in `range`.
    fn big_integer(&self, range: &'static str) -> Bail {
        Bail::BigInteger {
            digits: String::from_utf8_lossy(&self.number).into_owned(),
            range,
            last: self.input.offset() - 1,
            task: TaskAt {
                index: self.index,
                key: self.has_key.then(|| self.table.decode(&self.task_code)),
            },
        }
    }

    /// Runs `read` one level deeper: refused past [`MAX_NESTING`] levels,
    /// with room on the stack for it every [`GROW_EVERY`] levels.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Bail::Invalid);
        }
        let value = if self.depth.is_multiple_of(GROW_EVERY) {
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || read(self))
        } else {
            read(self)
        };
        self.depth -= 1;
        value
    }

    /// A key, appended to `code` as its code (see [`KeyTable`]), its strings
    /// interned: no [`Key`] is built.
    fn key_code(&mut self) -> Result<()> {
        match self.input.token()? {
            b'"' => {
                let key = self.input.raw_string(&mut self.scratch, KEY);
                self.in_task(key)?;
                let string = self.table.strings_mut().intern(&self.scratch);
                key_table::push_str(&mut self.code, string.ok_or(Bail::Invalid)?);
                Ok(())
            }
            b'[' => self.nested(|reader| {
                key_table::push_tuple(&mut reader.code);
                reader.elements(Self::key_code)?;
                key_table::push_end(&mut reader.code);
                Ok(())
            }),
            byte @ (b'-' | b'0'..=b'9') => {
                self.input.pos -= 1;
                match self.number_token(Some(byte))? {
                    Number::Int(i) => key_table::push_int(&mut self.code, i),
                    Number::Float(x) => key_table::push_float(&mut self.code, x),
                    Number::Big => unreachable!("reported by number_token"),
                }
                Ok(())
            }
            _ => Err(Bail::Invalid),
        }
    }

    /// A reference to a task: its target recorded (forward if the task is
    /// not read yet), and, when `want` asks, its key, shared with the task's
    /// when the task came first.
    fn reference(&mut self, want: bool) -> Result<Option<Key>> {
        self.code.clear();
        self.key_code()?;
        let at = self.targets.len();
        match self.table.find(&self.code) {
            Some(node) => {
                self.targets.push(node);
                Ok(want.then(|| self.keys[node as usize].clone()))
            }
            None => {
                self.targets.push(u32::MAX);
                self.forward_codes.extend_from_slice(&self.code);
                self.forward.push((at, self.forward_codes.len()));
                Ok(want.then(|| self.table.decode(&self.code)))
            }
        }
    }

    /// The keys of `deps`: references, kept as keys when the sink wants
    /// bodies.
    fn deps<S: Sink>(&mut self) -> Result<Vec<Key>> {
        self.input.expect(b'[')?;
        let base = self.dep_keys.len();
        self.elements(|reader| {
            if let Some(key) = reader.reference(S::TERMS)? {
                reader.dep_keys.push(key);
            }
            Ok(())
        })?;
        Ok(self.dep_keys.drain(base..).collect())
    }

    /// A term.
    fn term(&mut self) -> Result<Term> {
        match self.input.token()? {
            b'{' => self.nested(Self::term_object),
            b'"' => {
                let literal = self.input.string(&mut self.scratch, LITERAL);
                self.in_task(literal)?;
                let text = std::str::from_utf8(&self.scratch).expect("checked UTF-8");
                Ok(Term::Lit(Value::from(text)))
            }
            b't' => {
                self.input.word(b"rue")?;
                Ok(Term::Lit(Value::Bool(true)))
            }
            b'f' => {
                self.input.word(b"alse")?;
                Ok(Term::Lit(Value::Bool(false)))
            }
            b'n' => {
                self.input.word(b"ull")?;
                Ok(Term::Lit(Value::Null))
            }
            byte @ (b'-' | b'0'..=b'9') => {
                self.input.pos -= 1;
                match self.number_token(Some(byte))? {
                    Number::Int(i) => Ok(Term::Lit(Value::Int(i))),
                    Number::Float(x) => Ok(Term::Lit(Value::Float(x))),
                    Number::Big => unreachable!("reported by number_token"),
                }
            }
            _ => Err(Bail::Invalid),
        }
    }

    /// An op name (its opening quote not consumed), interned.
    fn op(&mut self) -> Result<Op> {
        self.input.expect(b'"')?;
        let name = self.input.raw_string(&mut self.scratch, OP_NAME);
        self.in_task(name)?;
        let string = self.table.strings_mut().intern(&self.scratch);
        let name = self.table.strings().get(string.ok_or(Bail::Invalid)?);
        Ok(Op::from_shared(name.clone()))
    }

    /// The fields of a term object (its brace consumed).
    fn term_object(&mut self) -> Result<Term> {
        let (mut reference, mut op, mut args, mut list) = (None, None, None, None);
        self.fields(|reader| {
            reader.known_field_name()?;
            match reader.scratch.as_slice() {
                b"ref" if reference.is_none() => {
                    reference = Some(reader.reference(true)?.expect("asked for"));
                }
                b"call" if op.is_none() => op = Some(reader.op()?),
                b"args" if args.is_none() => args = Some(reader.terms()?),
                b"list" if list.is_none() => list = Some(reader.terms()?),
                _ => return Err(Bail::Invalid),
            }
            Ok(())
        })?;
        match (reference, op, args, list) {
            (Some(key), None, None, None) => Ok(Term::Ref(key)),
            (None, Some(op), Some(args), None) => Ok(Term::Call { op, args }),
            (None, None, None, Some(items)) => Ok(Term::List(items)),
            _ => Err(Bail::Invalid),
        }
    }

    /// An array of terms.
    fn terms(&mut self) -> Result<Vec<Term>> {
        self.input.expect(b'[')?;
        // Nested arrays gather above `base` and take their items back
        // before this one goes on (a bail ends the reading: what is left
        // on the stack then is dropped with the reader).
        let base = self.items.len();
        self.elements(|reader| {
            let term = reader.term()?;
            reader.items.push(term);
            Ok(())
        })?;
        Ok(self.items.drain(base..).collect())
    }

    /// The references of a term, in preorder, without building the term:
    /// what a reader of the graph's shape needs of it.
    fn refs(&mut self) -> Result<()> {
        match self.input.token()? {
            b'{' => self.nested(Self::refs_object),
            b'"' => self.input.skip_string(&mut self.scratch),
            b't' => self.input.word(b"rue"),
            b'f' => self.input.word(b"alse"),
            b'n' => self.input.word(b"ull"),
            byte @ (b'-' | b'0'..=b'9') => {
                self.input.pos -= 1;
                self.number_token(Some(byte)).map(drop)
            }
            _ => Err(Bail::Invalid),
        }
    }

    fn refs_object(&mut self) -> Result<()> {
        // As `term_object`, keeping only the references.
        let (mut reference, mut op, mut args, mut list) = (false, false, false, false);
        self.fields(|reader| {
            reader.known_field_name()?;
            match reader.scratch.as_slice() {
                b"ref" if !reference => {
                    reader.reference(false)?;
                    reference = true;
                }
                b"call" if !op => {
                    reader.input.expect(b'"')?;
                    reader.input.skip_string(&mut reader.scratch)?;
                    reader.calls += 1;
                    op = true;
                }
                b"args" | b"list" => {
                    let seen = if reader.scratch.as_slice() == b"args" {
                        &mut args
                    } else {
                        &mut list
                    };
                    if *seen {
                        return Err(Bail::Invalid);
                    }
                    *seen = true;
                    reader.input.expect(b'[')?;
                    reader.elements(Self::refs)?;
                }
                _ => return Err(Bail::Invalid),
            }
            Ok(())
        })?;
        match (reference, op, args, list) {
            (true, false, false, false)
            | (false, true, true, false)
            | (false, false, false, true) => Ok(()),
            _ => Err(Bail::Invalid),
        }
    }
}

/// Builds a [`TaskGraph`]: keeps every task, and at the end sets the
/// topology the reader resolved (no key is hashed again for it).
#[derive(Default)]
pub(crate) struct GraphSink {
    graph: TaskGraph,
}

impl Sink for GraphSink {
    const TERMS: bool = true;

    fn task(&mut self, key: &Key, body: Body, size: Option<u64>, cost: Option<f64>) -> Result<()> {
        self.graph
            .insert_task(key.clone(), Task { body, size, cost })
            .map_err(|_| Bail::Invalid)?;
        Ok(())
    }

    /// The graph's table then never grows: each growth copies every task
    /// into memory touched for the first time.
    fn reserve(&mut self, tasks: usize) {
        self.graph.try_reserve(tasks);
    }
}

impl GraphSink {
    /// The graph, with the topology read.
    pub(crate) fn finish(mut self, read: Document) -> TaskGraph {
        self.graph.set_topology(read.topology);
        self.graph
    }
}

/// Keeps nothing of the tasks (the reader does not even make their keys): a
/// [`Shape`] is what the reader itself keeps.
pub(crate) struct ShapeSink;

impl Sink for ShapeSink {
    const TERMS: bool = false;

    fn task(&mut self, _: &Key, _: Body, _: Option<u64>, _: Option<f64>) -> Result<()> {
        unreachable!("a sink without terms is given no tasks")
    }
}

impl ShapeSink {
    pub(crate) fn finish(read: Document) -> Shape {
        Shape::new(read.table, read.topology, read.literal, read.sizes)
    }
}
