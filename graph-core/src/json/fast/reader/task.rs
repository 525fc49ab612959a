//! One task of the document as the fast reader reads it: its fields, its
//! terms (or only their references), its key and the keys it refers to.

use super::Reader;
use crate::graph::Body;
use crate::json::error::TaskAt;
use crate::json::fast::input::Number;
use crate::json::fast::sink::Sink;
use crate::json::fast::{Bail, KEY, LITERAL, OP_NAME, Result, SIGNED, UNSIGNED};
use crate::json::source::Source;
use crate::json::{GROW_EVERY, MAX_NESTING, RED_ZONE, STACK_SEGMENT};
use crate::key_table;
use crate::{Key, NodeId, Op, Term, Value};

impl<I: Source> Reader<I> {
    pub(super) fn task<S: Sink>(&mut self, sink: &mut S) -> Result<()> {
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

    /// A key, appended to `code` as its code (see
    /// [`KeyTable`](crate::key_table::KeyTable)), its strings interned: no
    /// [`Key`] is built.
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
