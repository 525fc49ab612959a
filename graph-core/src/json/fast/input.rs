//! The bytes of a document, lexed: read a chunk at a time, with the
//! strings (escapes decoded, UTF-8 checked), numbers and words of JSON.

use super::{Bail, Limit, Result, TooLong};
use crate::json::source::Source;

/// The most bytes of a skipped string held at once.
const SKIP_WINDOW: usize = 1 << 16;

/// The bytes of a document, a chunk at a time.
pub(super) struct Input<I> {
    source: I,
    buf: Vec<u8>,
    pub(super) pos: usize,
    /// `buf.len()`.
    len: usize,
    /// Bytes before `buf[0]`.
    consumed: u64,
    done: bool,
}

impl<I: Source> Input<I> {
    pub(super) fn new(source: I) -> Input<I> {
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
    pub(super) fn peek(&mut self) -> Result<Option<u8>> {
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
    pub(super) fn peek_token(&mut self) -> Result<Option<u8>> {
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
    pub(super) fn token(&mut self) -> Result<u8> {
        match self.peek_token()? {
            Some(byte) => {
                self.pos += 1;
                Ok(byte)
            }
            None => Err(Bail::Invalid),
        }
    }

    pub(super) fn expect(&mut self, byte: u8) -> Result<()> {
        if self.token()? == byte {
            Ok(())
        } else {
            Err(Bail::Invalid)
        }
    }

    /// The offset of the next byte in the whole text.
    pub(super) fn offset(&self) -> u64 {
        self.consumed + self.pos as u64
    }

    /// A string's bytes (its opening quote consumed) into `out`, escapes
    /// decoded; checked to be UTF-8, and to be no longer than `limit`.
    pub(super) fn string(&mut self, out: &mut Vec<u8>, limit: Limit) -> Result<()> {
        let ascii = self.raw_string(out, limit)?;
        if !ascii && std::str::from_utf8(out).is_err() {
            return Err(Bail::Invalid);
        }
        Ok(())
    }

    /// Passes over a string (its opening quote consumed), checked as
    /// [`Input::string`] checks it, copied into `scratch` only when it has
    /// escapes or runs past the end of the chunk.
    pub(super) fn skip_string(&mut self, scratch: &mut Vec<u8>) -> Result<()> {
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
    pub(super) fn raw_string(&mut self, out: &mut Vec<u8>, limit: Limit) -> Result<bool> {
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
    pub(super) fn number(&mut self, text: &mut Vec<u8>) -> Result<Number> {
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
    pub(super) fn word(&mut self, rest: &[u8]) -> Result<()> {
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

pub(super) enum Number {
    Int(i64),
    Float(f64),
    /// An integer that does not fit in 64 signed bits.
    Big,
}
