//! The driver's output: one flat JSON object a line, read into a [`Record`]
//! by a parser of just that much JSON.

use std::collections::BTreeMap;

/// One line of the driver: a flat JSON object.
pub(super) type Record = BTreeMap<String, Value>;

/// A JSON scalar.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value {
    Str(String),
    Num(f64),
    /// `true`, `false` or `null`, which no table uses.
    Other,
}

impl Value {
    fn num(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            _ => None,
        }
    }

    fn str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

pub(super) fn get_str<'a>(record: &'a Record, field: &str) -> Option<&'a str> {
    record.get(field).and_then(Value::str)
}

pub(super) fn get_num(record: &Record, field: &str) -> Option<f64> {
    record.get(field).and_then(Value::num)
}

pub(super) fn kind_is(record: &Record, kind: &str) -> bool {
    get_str(record, "kind") == Some(kind)
}

/// Parses a flat JSON object (string, number, `true`, `false` and `null`
/// values), as the driver prints them; `None` for anything else.
pub(super) fn parse_record(line: &str) -> Option<Record> {
    let mut p = Parser {
        chars: line.trim().chars().collect(),
        pos: 0,
    };
    let mut record = Record::new();
    p.expect('{')?;
    if p.eat('}') {
        return p.at_end().then_some(record);
    }
    loop {
        let key = p.string()?;
        p.expect(':')?;
        let value = p.value()?;
        record.insert(key, value);
        if p.eat(',') {
            continue;
        }
        p.expect('}')?;
        return p.at_end().then_some(record);
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn skip_space(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, want: char) -> bool {
        self.skip_space();
        if self.chars.get(self.pos) == Some(&want) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, want: char) -> Option<()> {
        self.eat(want).then_some(())
    }

    fn at_end(&mut self) -> bool {
        self.skip_space();
        self.pos == self.chars.len()
    }

    fn string(&mut self) -> Option<String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            let c = *self.chars.get(self.pos)?;
            self.pos += 1;
            match c {
                '"' => return Some(out),
                '\\' => {
                    let escaped = *self.chars.get(self.pos)?;
                    self.pos += 1;
                    out.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'u' => {
                            let hex: String =
                                self.chars.get(self.pos..self.pos + 4)?.iter().collect();
                            self.pos += 4;
                            char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
                                .unwrap_or('\u{fffd}')
                        }
                        other => other,
                    });
                }
                c => out.push(c),
            }
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.skip_space();
        match *self.chars.get(self.pos)? {
            '"' => self.string().map(Value::Str),
            c if c == '-' || c.is_ascii_digit() => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
                {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                text.parse().ok().map(Value::Num)
            }
            _ => {
                for word in ["true", "false", "null"] {
                    let end = self.pos + word.len();
                    if self
                        .chars
                        .get(self.pos..end)?
                        .iter()
                        .copied()
                        .eq(word.chars())
                    {
                        self.pos = end;
                        return Some(Value::Other);
                    }
                }
                None
            }
        }
    }
}
