//! The fast reader of `taskgraph-json/1`: one pass over the bytes, streamed
//! from a file (gzip or not) or a buffer, with no intermediate JSON values;
//! strings interned, keys shared with the tasks they name, and references
//! resolved to node ids as they are read.
//!
//! It reads every valid document. On anything else it gives up ([`Bail`]),
//! and the serde reader, which reports problems exactly (line, column, task
//! and key), reads the document again: errors cost a second reading,
//! valid documents only one. An integer that does not fit in 64 signed bits
//! is the one problem it reports itself, since serde's reader would read one
//! past `u64` as a float.

use std::io::{self, Read};

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use super::{FORMAT, GROW_EVERY, MAX_NESTING, RED_ZONE, STACK_SEGMENT};
use crate::error::TaskAt;
use crate::graph::{Body, Task};
use crate::term::OpInterner;
use crate::{Key, NodeId, Shape, TaskGraph, Term, Topology, Value};

/// Why the fast reader stopped.
#[derive(Debug)]
pub(crate) enum Bail {
    /// Something it does not read: the document is not valid (or reading it
    /// failed); the serde reader says what is wrong.
    Invalid,
    /// An integer literal that does not fit in 64 signed bits.
    BigInteger {
        /// The literal.
        digits: String,
        /// The offset of its last digit in the (uncompressed) text.
        last: u64,
        /// The task it is in.
        task: TaskAt,
    },
}

type Result<T> = std::result::Result<T, Bail>;

/// What a reader does with each task it reads.
pub(crate) trait Sink {
    /// Whether it wants the terms (else only their references).
    const TERMS: bool;

    /// The next task: its key and body, and its metadata. For a body read
    /// without its terms, `Body::Opaque` holds the references in preorder.
    fn task(&mut self, key: Key, body: Body, size: Option<u64>, cost: Option<f64>) -> Result<()>;
}

/// The bytes of a document, read a chunk at a time.
struct Input<R> {
    source: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// Bytes before `buf[0]`.
    consumed: u64,
    done: bool,
}

/// The size of a chunk.
const CHUNK: usize = 1 << 20;

impl<R: Read> Input<R> {
    fn new(source: R) -> Input<R> {
        Input {
            source,
            buf: vec![0; CHUNK].into_boxed_slice(),
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
        self.len = 0;
        loop {
            match self.source.read(&mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len = n;
                    return Ok(true);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(Bail::Invalid),
            }
        }
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
    /// decoded; checked to be UTF-8.
    fn string(&mut self, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        loop {
            // The run of plain bytes in this chunk.
            let start = self.pos;
            while self.pos < self.len {
                let byte = self.buf[self.pos];
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.extend_from_slice(&self.buf[start..self.pos]);
            match self.peek()? {
                None => return Err(Bail::Invalid),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(out)?;
                }
                Some(byte) if byte < 0x20 => return Err(Bail::Invalid),
                Some(_) => {}
            }
        }
        if std::str::from_utf8(out).is_err() {
            return Err(Bail::Invalid);
        }
        Ok(())
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

/// Whether `text` follows JSON's grammar of numbers:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(text: &[u8]) -> bool {
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

/// The reader: the input, the interned strings, and where it is.
pub(crate) struct Reader<R> {
    input: Input<R>,
    strings: OpInterner,
    scratch: Vec<u8>,
    number: Vec<u8>,
    /// The task being read, and its key once read.
    at: TaskAt,
    depth: usize,
}

impl<R: Read> Reader<R> {
    pub(crate) fn new(source: R) -> Reader<R> {
        Reader {
            input: Input::new(source),
            strings: OpInterner::default(),
            scratch: Vec::new(),
            number: Vec::new(),
            at: TaskAt {
                index: 0,
                key: None,
            },
            depth: 0,
        }
    }

    /// Reads a whole document into `sink`.
    pub(crate) fn read<S: Sink>(&mut self, sink: &mut S) -> Result<()> {
        // A byte order mark is passed over, as the serde reader does.
        if self.input.peek()? == Some(0xef) {
            self.input.word(b"\xef\xbb\xbf")?;
        }
        self.input.expect(b'{')?;
        let (mut format, mut tasks) = (false, false);
        if self.input.peek_token()? == Some(b'}') {
            return Err(Bail::Invalid);
        }
        loop {
            self.input.expect(b'"')?;
            self.input.string(&mut self.scratch)?;
            self.input.expect(b':')?;
            match self.scratch.as_slice() {
                b"format" => {
                    self.input.expect(b'"')?;
                    self.input.string(&mut self.scratch)?;
                    if self.scratch != FORMAT.as_bytes() {
                        return Err(Bail::Invalid);
                    }
                    format = true;
                }
                b"tasks" if !tasks => {
                    self.tasks(sink)?;
                    tasks = true;
                }
                b"tasks" => return Err(Bail::Invalid),
                _ => self.skip_value()?,
            }
            match self.input.token()? {
                b',' => {}
                b'}' => break,
                _ => return Err(Bail::Invalid),
            }
        }
        if !(format && tasks) || self.input.peek_token()?.is_some() {
            return Err(Bail::Invalid);
        }
        Ok(())
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
                b'"' => self.input.string(&mut self.scratch)?,
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
        self.input.string(&mut self.scratch)?;
        self.input.expect(b':')
    }

    fn tasks<S: Sink>(&mut self, sink: &mut S) -> Result<()> {
        self.input.expect(b'[')?;
        if self.input.peek_token()? == Some(b']') {
            self.input.pos += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.at = TaskAt { index, key: None };
            self.task(sink)?;
            index += 1;
            match self.input.token()? {
                b',' => {}
                b']' => return Ok(()),
                _ => return Err(Bail::Invalid),
            }
        }
    }

    fn task<S: Sink>(&mut self, sink: &mut S) -> Result<()> {
        self.input.expect(b'{')?;
        let (mut key, mut body, mut size, mut cost) = (None, None, None, None);
        if self.input.peek_token()? == Some(b'}') {
            return Err(Bail::Invalid);
        }
        loop {
            self.input.expect(b'"')?;
            self.input.string(&mut self.scratch)?;
            self.input.expect(b':')?;
            match self.scratch.as_slice() {
                b"key" if key.is_none() => {
                    let read = self.key()?;
                    self.at.key = Some(read.clone());
                    key = Some(read);
                }
                b"task" if body.is_none() => {
                    body = Some(if S::TERMS {
                        Body::Term(self.term()?)
                    } else {
                        let mut refs = Vec::new();
                        self.refs(&mut refs)?;
                        Body::Opaque(refs)
                    });
                }
                b"deps" if body.is_none() => body = Some(Body::Opaque(self.keys()?)),
                b"size" if size.is_none() => {
                    if !matches!(self.input.peek_token()?, Some(b'0'..=b'9')) {
                        return Err(Bail::Invalid);
                    }
                    // A size is a u64, to 2^64 - 1.
                    size = Some(match self.input.number(&mut self.number)? {
                        Number::Int(n) => n as u64,
                        Number::Big => std::str::from_utf8(&self.number)
                            .ok()
                            .and_then(|digits| digits.parse().ok())
                            .ok_or(Bail::Invalid)?,
                        Number::Float(_) => return Err(Bail::Invalid),
                    });
                }
                b"cost" if cost.is_none() => {
                    let token = self.input.peek_token()?;
                    let seconds = match self.number_token(token)? {
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
            match self.input.token()? {
                b',' => {}
                b'}' => break,
                _ => return Err(Bail::Invalid),
            }
        }
        match (key, body) {
            (Some(key), Some(body)) => sink.task(key, body, size, cost),
            _ => Err(Bail::Invalid),
        }
    }

    /// A number token that starts with `first` (not consumed), with a big
    /// integer reported.
    fn number_token(&mut self, first: Option<u8>) -> Result<Number> {
        if !matches!(first, Some(b'-' | b'0'..=b'9')) {
            return Err(Bail::Invalid);
        }
        let number = self.input.number(&mut self.number)?;
        if let Number::Big = number {
            return Err(Bail::BigInteger {
                digits: String::from_utf8_lossy(&self.number).into_owned(),
                last: self.input.offset() - 1,
                task: self.at.clone(),
            });
        }
        Ok(number)
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

    fn key(&mut self) -> Result<Key> {
        match self.input.token()? {
            b'"' => {
                self.input.string(&mut self.scratch)?;
                let text = std::str::from_utf8(&self.scratch).expect("checked UTF-8");
                Ok(Key::Str(self.strings.intern_str(text)))
            }
            b'[' => self.nested(|reader| {
                let mut parts = Vec::new();
                if reader.input.peek_token()? == Some(b']') {
                    reader.input.pos += 1;
                    return Ok(Key::from(parts));
                }
                loop {
                    parts.push(reader.key()?);
                    match reader.input.token()? {
                        b',' => {}
                        b']' => return Ok(Key::from(parts)),
                        _ => return Err(Bail::Invalid),
                    }
                }
            }),
            byte @ (b'-' | b'0'..=b'9') => {
                self.input.pos -= 1;
                match self.number_token(Some(byte))? {
                    Number::Int(i) => Ok(Key::Int(i)),
                    Number::Float(x) => Ok(Key::Float(x)),
                    Number::Big => unreachable!("reported by number_token"),
                }
            }
            _ => Err(Bail::Invalid),
        }
    }

    /// An array of keys.
    fn keys(&mut self) -> Result<Vec<Key>> {
        self.input.expect(b'[')?;
        let mut keys = Vec::new();
        if self.input.peek_token()? == Some(b']') {
            self.input.pos += 1;
            return Ok(keys);
        }
        loop {
            keys.push(self.key()?);
            match self.input.token()? {
                b',' => {}
                b']' => return Ok(keys),
                _ => return Err(Bail::Invalid),
            }
        }
    }

    /// A term.
    fn term(&mut self) -> Result<Term> {
        match self.input.token()? {
            b'{' => self.nested(Self::term_object),
            b'"' => {
                self.input.string(&mut self.scratch)?;
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

    /// The fields of a term object (its brace consumed).
    fn term_object(&mut self) -> Result<Term> {
        let (mut reference, mut op, mut args, mut list) = (None, None, None, None);
        if self.input.peek_token()? == Some(b'}') {
            return Err(Bail::Invalid);
        }
        loop {
            self.input.expect(b'"')?;
            self.input.string(&mut self.scratch)?;
            self.input.expect(b':')?;
            match self.scratch.as_slice() {
                b"ref" if reference.is_none() => reference = Some(self.key()?),
                b"call" if op.is_none() => {
                    self.input.expect(b'"')?;
                    self.input.string(&mut self.scratch)?;
                    let name = std::str::from_utf8(&self.scratch).expect("checked UTF-8");
                    op = Some(self.strings.intern(name));
                }
                b"args" if args.is_none() => args = Some(self.terms()?),
                b"list" if list.is_none() => list = Some(self.terms()?),
                _ => return Err(Bail::Invalid),
            }
            match self.input.token()? {
                b',' => {}
                b'}' => break,
                _ => return Err(Bail::Invalid),
            }
        }
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
        let mut items = Vec::new();
        if self.input.peek_token()? == Some(b']') {
            self.input.pos += 1;
            return Ok(items);
        }
        loop {
            items.push(self.term()?);
            match self.input.token()? {
                b',' => {}
                b']' => return Ok(items),
                _ => return Err(Bail::Invalid),
            }
        }
    }

    /// The references of a term, in preorder, without building the term:
    /// what a reader of the graph's shape needs of it.
    fn refs(&mut self, refs: &mut Vec<Key>) -> Result<()> {
        match self.input.token()? {
            b'{' => self.nested(|reader| reader.refs_object(refs)),
            b'"' => self.input.string(&mut self.scratch),
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

    fn refs_object(&mut self, refs: &mut Vec<Key>) -> Result<()> {
        // As `term_object`, keeping only the references.
        let (mut reference, mut op, mut args, mut list) = (false, false, false, false);
        if self.input.peek_token()? == Some(b'}') {
            return Err(Bail::Invalid);
        }
        loop {
            self.input.expect(b'"')?;
            self.input.string(&mut self.scratch)?;
            self.input.expect(b':')?;
            match self.scratch.as_slice() {
                b"ref" if !reference => {
                    refs.push(self.key()?);
                    reference = true;
                }
                b"call" if !op => {
                    self.input.expect(b'"')?;
                    self.input.string(&mut self.scratch)?;
                    op = true;
                }
                b"args" | b"list" => {
                    let seen = if self.scratch.as_slice() == b"args" {
                        &mut args
                    } else {
                        &mut list
                    };
                    if *seen {
                        return Err(Bail::Invalid);
                    }
                    *seen = true;
                    self.input.expect(b'[')?;
                    if self.input.peek_token()? == Some(b']') {
                        self.input.pos += 1;
                    } else {
                        loop {
                            self.refs(refs)?;
                            match self.input.token()? {
                                b',' => {}
                                b']' => break,
                                _ => return Err(Bail::Invalid),
                            }
                        }
                    }
                }
                _ => return Err(Bail::Invalid),
            }
            match self.input.token()? {
                b',' => {}
                b'}' => break,
                _ => return Err(Bail::Invalid),
            }
        }
        match (reference, op, args, list) {
            (true, false, false, false)
            | (false, true, true, false)
            | (false, false, false, true) => Ok(()),
            _ => Err(Bail::Invalid),
        }
    }
}

/// Builds a [`TaskGraph`] from the tasks read: every reference to a task
/// read before shares that task's key and is resolved to its node as it is
/// read; references forward are resolved at the end. The graph gets its
/// topology from these, without hashing a key again.
#[derive(Default)]
pub(crate) struct GraphSink {
    graph: TaskGraph,
    offsets: Vec<u32>,
    /// Every reference, by node index; `u32::MAX` for one forward.
    targets: Vec<u32>,
    /// The references forward: their position in `targets`, and the key.
    forward: Vec<(usize, Key)>,
}

impl Sink for GraphSink {
    const TERMS: bool = true;

    fn task(
        &mut self,
        key: Key,
        mut body: Body,
        size: Option<u64>,
        cost: Option<f64>,
    ) -> Result<()> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let graph = &self.graph;
        let (targets, forward) = (&mut self.targets, &mut self.forward);
        for_each_ref_mut(&mut body, |reference| match graph.entry_of(reference) {
            Some((node, shared)) => {
                // The key the graph holds, so that both share one copy.
                *reference = shared.clone();
                targets.push(node.as_u32());
            }
            None => {
                forward.push((targets.len(), reference.clone()));
                targets.push(u32::MAX);
            }
        });
        let end = u32::try_from(self.targets.len()).map_err(|_| Bail::Invalid)?;
        self.offsets.push(end);
        self.graph
            .insert_task(key, Task { body, size, cost })
            .map_err(|_| Bail::Invalid)?;
        Ok(())
    }
}

impl GraphSink {
    /// The graph, with its topology; a missing key or a cycle gives up (the
    /// serde reader then reports it).
    pub(crate) fn finish(mut self) -> Result<TaskGraph> {
        for (at, key) in std::mem::take(&mut self.forward) {
            let (node, _) = self.graph.entry_of(&key).ok_or(Bail::Invalid)?;
            self.targets[at] = node.as_u32();
        }
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let topology = Topology::from_dependency_rows(self.offsets, self.targets)
            .map_err(|_| Bail::Invalid)?;
        self.graph.set_topology(topology);
        Ok(self.graph)
    }
}

/// Keeps the keys and the topology of the tasks read, not their bodies: a
/// [`Shape`].
#[derive(Default)]
pub(crate) struct ShapeSink {
    keys: IndexSet<Key, FxBuildHasher>,
    offsets: Vec<u32>,
    targets: Vec<u32>,
    forward: Vec<(usize, Key)>,
}

impl Sink for ShapeSink {
    const TERMS: bool = false;

    fn task(&mut self, key: Key, body: Body, _size: Option<u64>, _cost: Option<f64>) -> Result<()> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let Body::Opaque(refs) = body else {
            unreachable!("a shape is read without its terms")
        };
        for reference in refs {
            match self.keys.get_index_of(&reference) {
                Some(index) => self.targets.push(index as u32),
                None => {
                    self.forward.push((self.targets.len(), reference));
                    self.targets.push(u32::MAX);
                }
            }
        }
        let end = u32::try_from(self.targets.len()).map_err(|_| Bail::Invalid)?;
        self.offsets.push(end);
        if self.keys.len() + 1 >= NodeId::MAX_NODES || !self.keys.insert(key) {
            return Err(Bail::Invalid);
        }
        Ok(())
    }
}

impl ShapeSink {
    pub(crate) fn finish(mut self) -> Result<Shape> {
        for (at, key) in std::mem::take(&mut self.forward) {
            let index = self.keys.get_index_of(&key).ok_or(Bail::Invalid)?;
            self.targets[at] = index as u32;
        }
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let topology = Topology::from_dependency_rows(self.offsets, self.targets)
            .map_err(|_| Bail::Invalid)?;
        Ok(Shape::new(self.keys, topology))
    }
}

/// Calls `f` on every key a body references, in preorder, to change it;
/// without recursion.
fn for_each_ref_mut(body: &mut Body, mut f: impl FnMut(&mut Key)) {
    match body {
        Body::Opaque(keys) => keys.iter_mut().for_each(f),
        Body::Term(term) => {
            let mut stack: Vec<&mut Term> = vec![term];
            while let Some(term) = stack.pop() {
                match term {
                    Term::Lit(_) => {}
                    Term::Ref(key) => f(key),
                    Term::Call { args: items, .. } | Term::List(items) => {
                        stack.extend(items.iter_mut().rev());
                    }
                }
            }
        }
    }
}
