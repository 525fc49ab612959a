//! The `taskgraph-json/1` interchange format: reading (plain or gzip, from a
//! file, a buffer or standard input) and writing.
//!
//! ```json
//! {"format": "taskgraph-json/1", "tasks": [
//!   {"key": "x", "task": 1},
//!   {"key": ["y", 0], "task": {"call": "inc", "args": [{"ref": "x"}]}, "size": 8},
//!   {"key": "z", "deps": ["x", ["y", 0]]}
//! ]}
//! ```
//!
//! A KEY is a JSON string or number, or an array of those (arrays nest). A
//! TERM is a JSON scalar (a literal), `{"ref": KEY}`, `{"call": "op", "args":
//! [TERM, ...]}` or `{"list": [TERM, ...]}`. A task has `"task"` or, for an
//! opaque task known only by its dependencies, `"deps"`; optionally `"size"`
//! (bytes) and `"cost"` (seconds). Other top-level fields are ignored; any
//! other task field is an error.

mod error;
mod fast;
mod read;
mod source;
mod write;

use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::Path;

use self::fast::{Bail, GraphSink, Reader, ShapeSink};
use self::read::{check, parse};
use self::source::{Chunked, Source, prefetched};
use crate::graph::{Body, Task};
use crate::{Key, Shape, TaskGraph, Term, Value};

pub use self::error::{Error, Problem, TaskAt};

/// The value of the `"format"` field.
pub const FORMAT: &str = "taskgraph-json/1";

pub use crate::limits::{MAX_NAME_BYTES, MAX_NESTING, MAX_STRING_BYTES};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The bytes of the smallest gzip file: a header (10), an empty body (2)
/// and the trailer (8).
const GZIP_SMALLEST: u64 = 20;

/// How many levels of nesting the reader goes between checks of its stack;
/// the room a check asks for, which holds that many levels with a wide
/// margin; and the size of a new stack segment when there is not that room.
const GROW_EVERY: usize = 16;
const RED_ZONE: usize = 256 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// Reads a graph from a file, or from standard input when `path` is `-`.
/// Gzip is detected by content, whatever the file is called. A file is read
/// as it streams in, never whole in memory, and read (and decompressed) on a
/// second thread while the first parses.
///
/// # Errors
///
/// Any error of [`from_slice`], or of reading the file, wrapped in
/// [`Error::In`] so that it names the file.
pub fn read_path(path: impl AsRef<Path>) -> Result<TaskGraph, Error> {
    read_with(path.as_ref(), read_graph, Ok)
}

/// Reads the [`Shape`] of a graph (its keys and topology, not its task
/// bodies) from a file, or from standard input when `path` is `-`: what
/// ordering and statistics need, in a fraction of the memory of
/// [`read_path`]. The file must be a valid graph, as for [`read_path`].
///
/// # Errors
///
/// As [`read_path`], with the same messages.
///
/// # Example
///
/// ```
/// use graph_core::{Dag, TaskGraph, Term, json};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .build()?;
/// let path = std::env::temp_dir().join(format!("shape-{}.json", std::process::id()));
/// json::write_path(&graph, &path)?;
/// let shape = json::read_shape_path(&path)?;
/// assert_eq!((shape.len(), shape.topology().edge_count()), (2, 1));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_shape_path(path: impl AsRef<Path>) -> Result<Shape, Error> {
    read_with(path.as_ref(), read_shape, |graph| Ok(Shape::of(&graph)?))
}

/// Reads a graph from JSON text, or from gzip-compressed JSON text.
///
/// The result is checked whole: every reference resolves and there is no
/// cycle, so its [`TaskGraph::topology`] is ready.
///
/// # Errors
///
/// [`Error::Syntax`] for text that is not JSON (with line and column),
/// [`Error::Invalid`] for JSON that is not `taskgraph-json/1` (with line,
/// column and the task's position and key), [`Error::AtTask`] around a
/// [`crate::Error::MissingDependency`], and a [`crate::Error::Cycle`] (as
/// [`Error::Graph`]).
///
/// # Example
///
/// ```
/// use graph_core::{json, Key};
///
/// let text = r#"{"format": "taskgraph-json/1", "tasks": [
///     {"key": "x", "task": 1},
///     {"key": "y", "task": {"call": "inc", "args": [{"ref": "x"}]}}]}"#;
/// let graph = json::from_slice(text.as_bytes())?;
/// assert_eq!(graph.len(), 2);
///
/// let bad = r#"{"format": "taskgraph-json/1", "tasks": [{"key": "x", "task": 1, "colour": 2}]}"#;
/// let err = json::from_slice(bad.as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "line 1, column 73: tasks[0] (key 'x'): unknown field `colour`");
/// # Ok::<(), graph_core::json::Error>(())
/// ```
pub fn from_slice(bytes: &[u8]) -> Result<TaskGraph, Error> {
    from_bytes(bytes, read_graph, Ok)
}

/// [`read_shape_path`] on JSON text, or gzip-compressed JSON text.
///
/// # Errors
///
/// As [`from_slice`].
pub fn shape_from_slice(bytes: &[u8]) -> Result<Shape, Error> {
    from_bytes(bytes, read_shape, |graph| Ok(Shape::of(&graph)?))
}

/// What each reader makes of `bytes`, for the fuzz checker that holds them
/// to agree.
#[cfg(feature = "fuzzing")]
pub(crate) struct Readings {
    /// The streaming reader's graph; `None` where it gives up.
    pub(crate) graph: Option<TaskGraph>,
    /// The streaming reader's shape; `None` where it gives up.
    pub(crate) shape: Option<Shape>,
    /// Whether the streaming reader gave up on an integer beyond 64 bits,
    /// which the serde reader would take for a float.
    pub(crate) big_integer: bool,
    /// Whether it gave up on a string past its limit, which the serde
    /// reader (holding the whole text anyway) takes.
    pub(crate) too_long: bool,
    /// The serde reader's checked graph.
    pub(crate) serde: Result<TaskGraph, Error>,
}

/// [`Readings`] of `bytes`.
#[cfg(feature = "fuzzing")]
pub(crate) fn every_reading(bytes: &[u8]) -> Readings {
    fn fast<T>(bytes: &[u8], read: FastRead<T>) -> Result<T, Bail> {
        if bytes.starts_with(&GZIP_MAGIC) {
            read(&mut Chunked(flate2::read::MultiGzDecoder::new(bytes)), None)
        } else {
            read(&mut Chunked(bytes), Some(bytes.len() as u64))
        }
    }
    let graph = fast(bytes, read_graph);
    Readings {
        big_integer: matches!(graph, Err(Bail::BigInteger { .. })),
        too_long: matches!(graph, Err(Bail::TooLong(_))),
        graph: graph.ok(),
        shape: fast(bytes, read_shape).ok(),
        serde: plain_text(bytes.to_vec()).and_then(|text| {
            let graph = parse(&text)?;
            check(&graph)?;
            Ok(graph)
        }),
    }
}

/// The fast reader into a graph, with room for about `size_hint` bytes.
fn read_graph(source: &mut dyn Source, size_hint: Option<u64>) -> Result<TaskGraph, Bail> {
    let mut sink = GraphSink::default();
    let read = Reader::new(source, size_hint).read(&mut sink)?;
    Ok(sink.finish(read))
}

/// The fast reader into a shape, with room for about `size_hint` bytes.
fn read_shape(source: &mut dyn Source, size_hint: Option<u64>) -> Result<Shape, Bail> {
    let read = Reader::new(source, size_hint).read(&mut ShapeSink)?;
    Ok(ShapeSink::finish(read))
}

/// A fast reader of a document of about the size given, if known.
type FastRead<T> = fn(&mut dyn Source, Option<u64>) -> Result<T, Bail>;

/// Reads `path` with the fast reader `fast`; where it gives up, with the
/// serde reader, whose graph `slow` turns into what `fast` gives.
fn read_with<T>(
    path: &Path,
    fast: FastRead<T>,
    slow: fn(TaskGraph) -> Result<T, Error>,
) -> Result<T, Error> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        let within = |source: Error| Error::In {
            origin: "<stdin>".to_owned(),
            error: Box::new(source),
        };
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|err| within(Error::Io(err)))?;
        return from_bytes(&bytes, fast, slow).map_err(within);
    }
    let within = |source: Error| Error::In {
        origin: path.display().to_string(),
        error: Box::new(source),
    };
    let attempt = (|| -> io::Result<Result<T, Bail>> {
        let file = std::fs::File::open(path)?;
        let size = file.metadata()?.len();
        let mut file = io::BufReader::with_capacity(1 << 16, file);
        Ok(if file.fill_buf()?.starts_with(&GZIP_MAGIC) {
            // A file long enough for a trailer (a pipe says 0 bytes, and
            // what it gave is not given again) is read again from its start
            // once the trailer is read.
            let (file, plain_size) = if size < GZIP_SMALLEST {
                (file, 0)
            } else {
                let mut inner = file.into_inner();
                let plain_size = gzip_plain_size(&mut inner)?;
                (io::BufReader::with_capacity(1 << 16, inner), plain_size)
            };
            // JSON graphs compress tenfold or more (forty times, dask's).
            let hint = Some(plain_size.max(size.saturating_mul(10)));
            let decoder = flate2::read::MultiGzDecoder::new(file);
            prefetched(decoder, |text| fast(text, hint))
        } else {
            prefetched(file, |text| fast(text, Some(size)))
        })
    })();
    match attempt.map_err(|err| within(Error::Io(err)))? {
        Ok(value) => Ok(value),
        // A string too long is found again by streaming the file: the
        // document is not held whole.
        Err(Bail::TooLong(long)) => {
            let file = std::fs::File::open(path).map_err(|err| within(Error::Io(err)))?;
            let (line, column) =
                position(file, long.start).map_err(|err| within(Error::Io(err)))?;
            Err(within(long.at(line, column)))
        }
        // The document is read again, whole, by the reader of record.
        Err(bail) => {
            let bytes = std::fs::read(path).map_err(|err| within(Error::Io(err)))?;
            let text = plain_text(bytes).map_err(within)?;
            explain(bail, &text, slow).map_err(within)
        }
    }
}

/// The size of a gzip file's text as its trailer gives it (its last four
/// bytes: the size of the last member's text, modulo 2^32), the file then
/// at its start. Not to be trusted (a file of several members, or of more
/// than 4 GiB of text, says less), but room for it spares growing the
/// tables as the text comes.
fn gzip_plain_size(file: &mut std::fs::File) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut trailer = [0_u8; 4];
    file.seek(SeekFrom::End(-4))?;
    file.read_exact(&mut trailer)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(u64::from(u32::from_le_bytes(trailer)))
}

/// [`read_with`] on bytes in memory.
fn from_bytes<T>(
    bytes: &[u8],
    fast: FastRead<T>,
    slow: fn(TaskGraph) -> Result<T, Error>,
) -> Result<T, Error> {
    let attempt = if bytes.starts_with(&GZIP_MAGIC) {
        fast(&mut Chunked(flate2::read::MultiGzDecoder::new(bytes)), None)
    } else {
        fast(&mut Chunked(bytes), Some(bytes.len() as u64))
    };
    match attempt {
        Ok(value) => Ok(value),
        Err(Bail::TooLong(long)) => {
            let (line, column) = position(bytes, long.start)?;
            Err(long.at(line, column))
        }
        Err(bail) => {
            let text = plain_text(bytes.to_vec())?;
            explain(bail, &text, slow)
        }
    }
}

/// The line and column (as serde's reader counts them: in bytes, from 1,
/// after a byte order mark) of the byte at `offset` in the text of `source`
/// (gzip or not), read as a stream.
fn position(source: impl Read, offset: u64) -> io::Result<(usize, usize)> {
    let mut source = io::BufReader::with_capacity(1 << 16, source);
    let mut text: Box<dyn Read> = if source.fill_buf()?.starts_with(&GZIP_MAGIC) {
        Box::new(flate2::read::MultiGzDecoder::new(source))
    } else {
        Box::new(source)
    };
    let mut buf = vec![0_u8; 1 << 16];
    let (mut at, mut line, mut line_start, mut bom) = (0_u64, 1, 0_u64, 0_u64);
    while at < offset {
        let want = usize::try_from(offset - at)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let got = text.read(&mut buf[..want])?;
        if got == 0 {
            break;
        }
        let chunk = &buf[..got];
        if at == 0 && chunk.starts_with(b"\xef\xbb\xbf") {
            bom = 3;
        }
        for (i, _) in chunk.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
            line += 1;
            line_start = at + i as u64 + 1;
        }
        at += got as u64;
    }
    let line_start = line_start.max(bom);
    let column = usize::try_from(at.saturating_sub(line_start)).unwrap_or(usize::MAX) + 1;
    Ok((line, column))
}

/// The text of a document, gzip or not.
fn plain_text(bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
    if bytes.starts_with(&GZIP_MAGIC) {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut text)?;
        return Ok(text);
    }
    Ok(bytes)
}

/// What the fast reader's giving up on `text` means: the error the serde
/// reader finds (or, should it find none, its graph turned by `slow`), or
/// the integer too large that the fast reader met.
fn explain<T>(
    bail: Bail,
    text: &[u8],
    slow: fn(TaskGraph) -> Result<T, Error>,
) -> Result<T, Error> {
    match bail {
        Bail::Invalid => {
            let graph = parse(text)?;
            check(&graph)?;
            slow(graph)
        }
        Bail::BigInteger {
            digits,
            range,
            last,
            task,
        } => {
            let last = usize::try_from(last).unwrap_or(usize::MAX).min(text.len());
            Err(big_integer(text, last, &digits, range, Some(task)))
        }
        Bail::TooLong(long) => {
            let (line, column) = position(text, long.start)?;
            Err(long.at(line, column))
        }
    }
}

/// The error for an integer literal beyond 64 signed bits whose last digit
/// is at `last` in `text`: line and column as serde's reader counts them (in
/// bytes, from 1, after a byte order mark).
fn big_integer(text: &[u8], last: usize, digits: &str, range: &str, task: Option<TaskAt>) -> Error {
    let bom = if text.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let before = &text[bom.min(last)..last];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    Error::Invalid {
        line,
        column: before.len() - line_start + 1,
        task,
        problem: Problem::Type {
            message: format!("integer {digits} does not fit in {range}"),
        },
    }
}

/// Refuses JSON `text` with an integer literal that does not fit in a signed
/// 64-bit integer. serde's reader takes one past `u64::MAX` for a float;
/// whatever reads keys or terms of this format with serde (a list of keys
/// on a command line, a rules file) calls this first, so that such a number
/// is an error everywhere, as in a graph file. The text is not otherwise
/// checked: invalid JSON passes, for serde to report.
///
/// # Errors
///
/// [`Error::Invalid`] at the first such integer (line and column of its
/// last digit), with no task.
///
/// # Example
///
/// ```
/// use graph_core::json;
///
/// assert!(json::check_integers(br#"[["x", 9223372036854775807], "1e99"]"#).is_ok());
/// let err = json::check_integers(br#"[["x", 18446744073709551616]]"#).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "line 1, column 27: integer 18446744073709551616 does not fit in a signed 64-bit integer"
/// );
/// ```
pub fn check_integers(text: &[u8]) -> Result<(), Error> {
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'"' => {
                // Past the string, its escapes included.
                at += 1;
                while at < text.len() && text[at] != b'"' {
                    at += if text[at] == b'\\' { 2 } else { 1 };
                }
                at += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                while at < text.len()
                    && matches!(text[at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    at += 1;
                }
                let token = &text[start..at];
                let integer = !token.iter().any(|b| matches!(b, b'.' | b'e' | b'E'));
                let fits = std::str::from_utf8(token).is_ok_and(|t| t.parse::<i64>().is_ok());
                if integer && !fits && fast::is_json_number(token) {
                    let digits = String::from_utf8_lossy(token);
                    return Err(big_integer(
                        text,
                        at - 1,
                        &digits,
                        "a signed 64-bit integer",
                        None,
                    ));
                }
            }
            _ => at += 1,
        }
    }
    Ok(())
}

/// Writes a graph to a file, gzip-compressed when the name ends in `.gz`, or
/// to standard output when `path` is `-`. A file is written whole or not at
/// all ([`file::write_atomically`](crate::file::write_atomically)): a failure
/// leaves the old file as it was.
///
/// # Errors
///
/// As [`write()`], wrapped in [`Error::In`] so that it names the file.
pub fn write_path(graph: &TaskGraph, path: impl AsRef<Path>) -> Result<(), Error> {
    Document::new(graph).write_path(path)
}

/// Writes a graph as `taskgraph-json/1`, one task per line.
///
/// # Errors
///
/// [`Error::NonFiniteFloat`] for a NaN or infinite float, which JSON cannot
/// spell, [`crate::Error::TooDeep`] (as [`Error::Graph`]) for a task that nests deeper than
/// [`MAX_NESTING`] levels, which the reader would refuse, and [`Error::Io`]
/// when writing fails. Nothing is written past such a task.
///
/// # Example
///
/// ```
/// use graph_core::{json, TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task(("y", 0), Term::call("inc", [Term::key("x")]))
///     .size(8)
///     .build()?;
/// let text = json::to_string(&graph)?;
/// assert_eq!(text, r#"{"format":"taskgraph-json/1","tasks":[
/// {"key":"x","task":1},
/// {"key":["y",0],"task":{"call":"inc","args":[{"ref":"x"}]},"size":8}
/// ]}
/// "#);
/// assert_eq!(json::from_slice(text.as_bytes())?, graph);
/// # Ok::<(), graph_core::json::Error>(())
/// ```
pub fn write(graph: &TaskGraph, writer: impl Write) -> Result<(), Error> {
    Document::new(graph).write(writer)
}

/// A `taskgraph-json/1` document to write: a graph, and top-level fields of
/// the writer's own beside its `"format"` and `"tasks"` (who produced it,
/// notes of its own), which readers of the format ignore.
///
/// # Example
///
/// ```
/// use graph_core::{json, Key, TaskGraph, Term};
///
/// let graph = TaskGraph::builder().task("x", Term::lit(1)).build()?;
/// let mut text = Vec::new();
/// json::Document::new(&graph)
///     .field("producer", &"my-tool")?
///     .field("inputs", &[Key::from("x")])?
///     .write(&mut text)?;
/// assert_eq!(String::from_utf8(text).unwrap(), concat!(
///     r#"{"format":"taskgraph-json/1","producer":"my-tool","inputs":["x"],"tasks":["#,
///     "\n", r#"{"key":"x","task":1}"#, "\n]}\n",
/// ));
/// # Ok::<(), graph_core::json::Error>(())
/// ```
#[derive(Debug)]
pub struct Document<'g> {
    graph: &'g TaskGraph,
    /// Each field's name and its value as JSON text, in the order given.
    fields: Vec<(String, String)>,
}

impl<'g> Document<'g> {
    /// The document of `graph`, with no fields of its own yet.
    pub fn new(graph: &'g TaskGraph) -> Document<'g> {
        Document {
            graph,
            fields: Vec::new(),
        }
    }

    /// Adds the top-level field `name`, written after `"format"` and before
    /// `"tasks"`. Its value is written as serde_json writes it (so a float
    /// that is not finite is `null`: give keys already checked).
    ///
    /// # Errors
    ///
    /// [`Error::Field`] for the format's own names (`format`, `tasks`) and
    /// for a name given twice: JSON objects with repeated names are read
    /// differently by different readers.
    pub fn field(
        mut self,
        name: &str,
        value: &(impl serde::Serialize + ?Sized),
    ) -> Result<Document<'g>, Error> {
        if name == "format" || name == "tasks" || self.fields.iter().any(|(n, _)| n == name) {
            return Err(Error::Field {
                name: name.to_owned(),
            });
        }
        let text = serde_json::to_string(value).map_err(io::Error::from)?;
        self.fields.push((name.to_owned(), text));
        Ok(self)
    }

    /// Writes the document, one task per line.
    ///
    /// # Errors
    ///
    /// As [`write()`].
    pub fn write(&self, writer: impl Write) -> Result<(), Error> {
        let mut out = BufWriter::with_capacity(1 << 16, writer);
        write!(out, "{{\"format\":\"{FORMAT}\"")?;
        for (name, value) in &self.fields {
            out.write_all(b",")?;
            serde_json::to_writer(&mut out, name).map_err(io::Error::from)?;
            out.write_all(b":")?;
            out.write_all(value.as_bytes())?;
        }
        out.write_all(b",\"tasks\":[")?;
        let mut records = write::Records::default();
        for (i, (key, task)) in self.graph.iter().enumerate() {
            check_depth(key, task)?;
            check_finite(key, task)?;
            out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
            records.write(&mut out, key, task)?;
        }
        out.write_all(b"\n]}\n")?;
        out.flush()?;
        Ok(())
    }

    /// Writes the document to a file as [`write_path`] does: gzip when the
    /// name ends in `.gz`, standard output for `-`, a file whole or not at
    /// all.
    ///
    /// # Errors
    ///
    /// As [`write()`], wrapped in [`Error::In`] so that it names the file.
    pub fn write_path(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        if path == Path::new("-") {
            let within = |source| Error::In {
                origin: "<stdout>".to_owned(),
                error: Box::new(source),
            };
            return self.write(io::stdout().lock()).map_err(within);
        }
        let within = |source| Error::In {
            origin: path.display().to_string(),
            error: Box::new(source),
        };
        let gzip = path.extension().is_some_and(|ext| ext == "gz");
        crate::file::write_atomically(path, |file| {
            if gzip {
                let mut encoder =
                    flate2::write::GzEncoder::new(file, flate2::Compression::default());
                self.write(&mut encoder)?;
                encoder.finish()?;
                Ok(())
            } else {
                self.write(file)
            }
        })
        .map_err(within)
    }
}

/// The graph as `taskgraph-json/1` text.
///
/// # Errors
///
/// [`Error::NonFiniteFloat`], as [`write()`].
pub fn to_string(graph: &TaskGraph) -> Result<String, Error> {
    let mut bytes = Vec::new();
    write(graph, &mut bytes)?;
    Ok(String::from_utf8(bytes).expect("serde_json writes UTF-8"))
}

/// Refuses a task that nests deeper than [`MAX_NESTING`] levels, which the
/// reader would refuse (and which serializing would recurse through).
fn check_depth(key: &Key, task: &Task) -> Result<(), Error> {
    let levels = match &task.body {
        Body::Term(term) => term.levels(),
        Body::Opaque(deps) => deps.iter().map(Key::nesting).max().unwrap_or(0),
    }
    .max(key.nesting());
    if levels > MAX_NESTING {
        return Err(crate::Error::TooDeep {
            key: key.clone(),
            levels,
            limit: MAX_NESTING,
        }
        .into());
    }
    Ok(())
}

fn check_finite(key: &Key, task: &Task) -> Result<(), Error> {
    fn key_float(key: &Key) -> Option<f64> {
        match key {
            Key::Float(x) if !x.is_finite() => Some(*x),
            Key::Tuple(parts) => parts.iter().find_map(key_float),
            _ => None,
        }
    }
    // Terms nest up to `MAX_NESTING` levels: walked with a stack of their
    // own, not by recursion.
    fn term_float(term: &Term) -> Option<f64> {
        let items = match term {
            Term::Lit(Value::Float(x)) if !x.is_finite() => return Some(*x),
            Term::Lit(_) => return None,
            Term::Ref(key) => return key_float(key),
            Term::Call { args: items, .. } | Term::List(items) => items,
        };
        let mut stack: Vec<&Term> = items.iter().rev().collect();
        while let Some(term) = stack.pop() {
            match term {
                Term::Lit(Value::Float(x)) if !x.is_finite() => return Some(*x),
                Term::Lit(_) => {}
                Term::Ref(key) => {
                    if let Some(x) = key_float(key) {
                        return Some(x);
                    }
                }
                Term::Call { args: items, .. } | Term::List(items) => {
                    stack.extend(items.iter().rev());
                }
            }
        }
        None
    }
    let found = key_float(key)
        .or_else(|| match &task.body {
            Body::Term(term) => term_float(term),
            Body::Opaque(deps) => deps.iter().find_map(key_float),
        })
        .or(task.cost.filter(|cost| !cost.is_finite()));
    match found {
        Some(value) => Err(Error::NonFiniteFloat {
            key: key.clone(),
            value,
        }),
        None => Ok(()),
    }
}
