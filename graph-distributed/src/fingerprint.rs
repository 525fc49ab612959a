//! The job fingerprint: a SHA-256 digest of everything every process of a
//! run must agree on (every task's key, body and metadata, the requested
//! nodes, the placement and the priorities), so that processes that would
//! compute different things refuse to run together. It is made of two: the
//! digest of the graph's tasks, which a [`PreparedGraph`](crate::PreparedGraph)
//! keeps across runs, and the job's own parts.

use graph_core::{Body, Dag, Key, NodeId, TaskGraph, Term, Value};
use sha2::{Digest, Sha256};

use crate::Job;

/// Tell these digests from any other made with the same hash.
const GRAPH_DOMAIN: &[u8] = b"taskgraph graph digest 1\0";
const JOB_DOMAIN: &[u8] = b"taskgraph job fingerprint 3\0";

/// How many encoded bytes gather before they go into the hash: a graph's
/// encoding is millions of pieces of a few bytes each, and the hash is fast
/// only on long inputs.
const CHUNK: usize = 64 * 1024;

/// The fingerprint of `job` on the graph whose [`graph_digest`] is `graph`:
/// the same in every process that runs the same job on the same graph, on
/// any platform.
///
/// # Complexity
///
/// O(V) time: the job's outputs, placement and priorities.
pub(crate) fn fingerprint(job: &Job, graph: &[u8; 32]) -> [u8; 32] {
    let mut out = Encoder::new();
    out.bytes(JOB_DOMAIN);
    out.put(graph);
    out.u64(job.outputs().len() as u64);
    for node in job.outputs() {
        out.u64(u64::from(node.as_u32()));
    }
    out.u32s(job.placement());
    match job.priorities() {
        Some(priorities) => {
            out.tag(1);
            out.u32s(priorities);
        }
        None => out.tag(0),
    }
    out.finish()
}

/// The digest of `graph`'s tasks: every task's key, body, size and cost,
/// in order.
///
/// # Complexity
///
/// O(size of the graph's terms and keys) time, O(nesting) space: terms and
/// keys are walked with an explicit stack, never by recursion.
pub(crate) fn graph_digest(graph: &TaskGraph) -> [u8; 32] {
    let mut out = Encoder::new();
    // The run checked the graph; its topology is at hand.
    let topology = graph.topology().ok();
    out.bytes(GRAPH_DOMAIN);
    out.u64(graph.len() as u64);
    for (i, (key, task)) in graph.iter().enumerate() {
        out.key(key);
        match &task.body {
            Body::Term(term) => {
                out.tag(b'T');
                // References meet a task's dependencies in the order of
                // first reference: where no key is named twice, the n-th
                // reference is the n-th dependency, written by its index
                // (the keys themselves are all in the digest already)
                // rather than by reading its key once more.
                out.deps = match topology {
                    Some(topology) => {
                        let deps = topology.dependencies(NodeId::new(i));
                        if count_refs(term, &mut out.terms) == deps.len() {
                            deps
                        } else {
                            &[]
                        }
                    }
                    None => &[],
                };
                out.next_dep = 0;
                out.term(term);
            }
            Body::Opaque(deps) => {
                out.tag(b'O');
                out.u64(deps.len() as u64);
                for dep in deps {
                    out.key(dep);
                }
            }
        }
        out.option(task.size);
        out.option(task.cost.map(f64::to_bits));
        out.check_chunk();
    }
    out.finish()
}

/// Writes values into the hash unambiguously: every variable-length part is
/// preceded by its length (LEB128), every variant by a tag; numbers are
/// little endian. The bytes gather in a buffer that goes into the hash a
/// chunk at a time.
struct Encoder<'g> {
    hash: Sha256,
    buf: Vec<u8>,
    /// The explicit stacks of [`Encoder::term`] and [`Encoder::key`], kept
    /// between calls.
    terms: Vec<&'g Term>,
    keys: Vec<&'g Key>,
    /// The dependencies of the task being written, when its references
    /// are written by index: the n-th reference is `deps[n]`. Empty: by
    /// key.
    deps: &'g [NodeId],
    next_dep: usize,
}

impl<'g> Encoder<'g> {
    fn new() -> Encoder<'g> {
        Encoder {
            hash: Sha256::new(),
            buf: Vec::with_capacity(CHUNK + 64),
            terms: Vec::new(),
            keys: Vec::new(),
            deps: &[],
            next_dep: 0,
        }
    }

    /// The digest of everything written.
    fn finish(mut self) -> [u8; 32] {
        self.flush();
        let mut digest = [0_u8; 32];
        digest.copy_from_slice(&self.hash.finalize());
        digest
    }

    fn flush(&mut self) {
        self.hash.update(&self.buf);
        self.buf.clear();
    }

    /// Hands the buffer to the hash once it holds a chunk. Called after
    /// each task and each long string, so that the buffer stays near a
    /// chunk whatever the graph.
    fn check_chunk(&mut self) {
        if self.buf.len() >= CHUNK {
            self.flush();
        }
    }

    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.check_chunk();
    }

    fn tag(&mut self, tag: u8) {
        self.buf.push(tag);
    }

    /// A count or a length, in LEB128: one byte below 128.
    fn u64(&mut self, mut value: u64) {
        if value < 0x80 {
            self.tag(value as u8);
            return;
        }
        loop {
            let low = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.buf.push(low);
                return;
            }
            self.buf.push(low | 0x80);
        }
    }

    /// A number whose bits all count (an int, a float's bits).
    fn fixed(&mut self, bytes: [u8; 8]) {
        self.buf.extend_from_slice(&bytes);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.put(bytes);
    }

    fn option(&mut self, value: Option<u64>) {
        match value {
            Some(value) => {
                self.tag(1);
                self.u64(value);
            }
            None => self.tag(0),
        }
    }

    fn u32s(&mut self, values: &[u32]) {
        self.u64(values.len() as u64);
        for value in values {
            self.put(&value.to_le_bytes());
        }
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.tag(b'n'),
            Value::Bool(b) => {
                self.tag(b'b');
                self.tag(u8::from(*b));
            }
            Value::Int(i) => {
                self.tag(b'i');
                self.fixed(i.to_le_bytes());
            }
            Value::Float(x) => {
                self.tag(b'f');
                self.fixed(x.to_bits().to_le_bytes());
            }
            Value::Str(s) => {
                self.tag(b's');
                self.bytes(s.as_bytes());
            }
        }
    }

    /// A term, in pre-order: each node's tag and its count of children
    /// before the children. A call or list of leaves (the common task) is
    /// written straight; deeper ones go through the explicit stack.
    fn term(&mut self, term: &'g Term) {
        self.terms.push(term);
        while let Some(term) = self.terms.pop() {
            let children = match term {
                Term::Lit(_) | Term::Ref(_) => {
                    self.leaf(term);
                    continue;
                }
                Term::Call { op, args } => {
                    self.tag(b'C');
                    self.bytes(op.as_str().as_bytes());
                    args
                }
                Term::List(items) => {
                    self.tag(b'[');
                    items
                }
            };
            self.u64(children.len() as u64);
            if children.iter().all(is_leaf) {
                for child in children {
                    self.leaf(child);
                }
            } else {
                self.terms.extend(children.iter().rev());
            }
        }
    }

    /// A literal or a reference.
    fn leaf(&mut self, term: &'g Term) {
        match term {
            Term::Lit(value) => {
                self.tag(b'L');
                self.value(value);
            }
            Term::Ref(key) => match self.deps.get(self.next_dep) {
                Some(dep) => {
                    self.next_dep += 1;
                    self.tag(b'r');
                    self.u64(u64::from(dep.as_u32()));
                }
                None => {
                    self.tag(b'R');
                    self.key(key);
                }
            },
            Term::Call { .. } | Term::List(_) => unreachable!("only leaves are given"),
        }
    }

    /// A key, in pre-order as a term. A string, or a tuple of strings and
    /// numbers (most keys), is written straight; deeper tuples go through
    /// the explicit stack.
    fn key(&mut self, key: &'g Key) {
        match key {
            Key::Tuple(parts) if parts.iter().all(|part| !matches!(part, Key::Tuple(_))) => {
                self.tag(b't');
                self.u64(parts.len() as u64);
                for part in parts.iter() {
                    self.scalar_key(part);
                }
                return;
            }
            Key::Tuple(_) => {}
            scalar => {
                self.scalar_key(scalar);
                return;
            }
        }
        self.keys.push(key);
        while let Some(key) = self.keys.pop() {
            match key {
                Key::Tuple(parts) => {
                    self.tag(b't');
                    self.u64(parts.len() as u64);
                    self.keys.extend(parts.iter().rev());
                }
                scalar => self.scalar_key(scalar),
            }
        }
    }

    /// A string or number key (or part of a tuple key).
    fn scalar_key(&mut self, key: &Key) {
        match key {
            Key::Str(s) => {
                self.tag(b's');
                self.bytes(s.as_bytes());
            }
            Key::Int(i) => {
                self.tag(b'i');
                self.fixed(i.to_le_bytes());
            }
            Key::Float(x) => {
                self.tag(b'f');
                self.fixed(x.to_bits().to_le_bytes());
            }
            Key::Tuple(_) => unreachable!("only scalars are given"),
        }
    }
}

/// The references in `term`, with `stack` (left empty) for its walk.
fn count_refs<'g>(term: &'g Term, stack: &mut Vec<&'g Term>) -> usize {
    let mut refs = 0;
    stack.push(term);
    while let Some(term) = stack.pop() {
        match term {
            Term::Lit(_) => {}
            Term::Ref(_) => refs += 1,
            Term::Call { args: items, .. } | Term::List(items) => stack.extend(items.iter()),
        }
    }
    refs
}

fn is_leaf(term: &Term) -> bool {
    matches!(term, Term::Lit(_) | Term::Ref(_))
}

#[cfg(test)]
mod tests;
