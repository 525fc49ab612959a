//! The fast reader's state ([`Reader`]), and the document around its tasks:
//! the top-level fields, values skipped, references resolved at the end.

mod task;

use super::input::Input;
use super::sink::{Document, Sink};
use super::{Bail, FIELD_NAME, Result, TooLong};
use crate::json::FORMAT;
use crate::json::error::TaskAt;
use crate::json::source::Source;
use crate::key_table::KeyTable;
use crate::{Key, NodeId, Term, Topology};

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
}
