//! The job fingerprint: a SHA-256 digest of everything every process of a
//! run must agree on (every task's key, body and metadata, the requested
//! nodes, the placement and the priorities), so that processes that would
//! compute different things refuse to run together.

use graph_core::{Body, Key, TaskGraph, Term, Value};
use sha2::{Digest, Sha256};

use crate::Job;

/// Tells this digest from any other made with the same hash.
const DOMAIN: &[u8] = b"taskgraph job fingerprint 1\0";

/// The digest of `job` on `graph`: the same in every process that runs the
/// same job on the same graph, on any platform.
///
/// # Complexity
///
/// O(size of the graph's terms and keys) time, O(nesting) space: terms and
/// keys are walked with an explicit stack, never by recursion.
pub(crate) fn fingerprint(job: &Job, graph: &TaskGraph) -> [u8; 32] {
    let mut out = Encoder {
        hash: Sha256::new(),
        terms: Vec::new(),
        keys: Vec::new(),
    };
    out.bytes(DOMAIN);
    out.u64(graph.len() as u64);
    for (key, task) in graph.iter() {
        out.key(key);
        match &task.body {
            Body::Term(term) => {
                out.tag(b'T');
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
    }
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
    let mut digest = [0_u8; 32];
    digest.copy_from_slice(&out.hash.finalize());
    digest
}

/// Writes values into the hash unambiguously: every variable-length part is
/// preceded by its length, every variant by a tag; numbers are little
/// endian.
struct Encoder<'g> {
    hash: Sha256,
    /// The explicit stacks of [`Encoder::term`] and [`Encoder::key`], kept
    /// between calls.
    terms: Vec<&'g Term>,
    keys: Vec<&'g Key>,
}

impl<'g> Encoder<'g> {
    fn tag(&mut self, tag: u8) {
        self.hash.update([tag]);
    }

    fn u64(&mut self, value: u64) {
        self.hash.update(value.to_le_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.hash.update(bytes);
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
            self.hash.update(value.to_le_bytes());
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
                self.hash.update(i.to_le_bytes());
            }
            Value::Float(x) => {
                self.tag(b'f');
                self.u64(x.to_bits());
            }
            Value::Str(s) => {
                self.tag(b's');
                self.bytes(s.as_bytes());
            }
        }
    }

    /// A term, in pre-order: each node's tag and its count of children
    /// before the children.
    fn term(&mut self, term: &'g Term) {
        self.terms.push(term);
        while let Some(term) = self.terms.pop() {
            match term {
                Term::Lit(value) => {
                    self.tag(b'L');
                    self.value(value);
                }
                Term::Ref(key) => {
                    self.tag(b'R');
                    self.key(key);
                }
                Term::Call { op, args } => {
                    self.tag(b'C');
                    self.bytes(op.as_str().as_bytes());
                    self.u64(args.len() as u64);
                    self.terms.extend(args.iter().rev());
                }
                Term::List(items) => {
                    self.tag(b'[');
                    self.u64(items.len() as u64);
                    self.terms.extend(items.iter().rev());
                }
            }
        }
    }

    fn key(&mut self, key: &'g Key) {
        self.keys.push(key);
        while let Some(key) = self.keys.pop() {
            match key {
                Key::Str(s) => {
                    self.tag(b's');
                    self.bytes(s.as_bytes());
                }
                Key::Int(i) => {
                    self.tag(b'i');
                    self.hash.update(i.to_le_bytes());
                }
                Key::Float(x) => {
                    self.tag(b'f');
                    self.u64(x.to_bits());
                }
                Key::Tuple(parts) => {
                    self.tag(b't');
                    self.u64(parts.len() as u64);
                    self.keys.extend(parts.iter().rev());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
