//! Key objects to nodes, as Python's `in dict` finds them.

use pyo3::prelude::*;

use crate::signals::check_every;

/// The index is filled a block of this many slots (one cache line) at a
/// time (see [`KeyIndex::fill`]).
const FILL_BLOCK: usize = 8;

/// Maps key objects to nodes with Python's `in dict` semantics (hash, then
/// identity or `==`), keeping the graph's own key objects.
///
/// An open-addressing table with linear probing, each slot the low half of a
/// key's hash and its node plus one (0 for an empty slot), at most half
/// full: eight bytes a slot, so that a lookup in a graph of a million keys
/// touches one cache line of the table.
pub(crate) struct KeyIndex {
    slots: Vec<(u32, u32)>,
    /// Each node's full hash, to place it again when the table grows.
    hashes: Vec<isize>,
}

/// The slot where a hash's probe starts (Fibonacci hashing: Python hashes
/// of small integers are the integers themselves).
fn home(hash: isize, mask: usize) -> usize {
    let spread = (hash as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (spread >> 32) as usize & mask
}

impl KeyIndex {
    pub(crate) fn new() -> KeyIndex {
        KeyIndex {
            slots: vec![(0, 0); 16],
            hashes: Vec::new(),
        }
    }

    /// Registers the mapping's keys, by their hashes. They are distinct, so
    /// no lookup is needed first; they go in by the block of
    /// [`FILL_BLOCK`] slots where their probe starts, so that filling the
    /// table walks it once instead of jumping about. The blocks are a
    /// counting sort (linear, unlike a sort by slot), and the walks look for
    /// signals as they go.
    pub(crate) fn fill(&mut self, py: Python<'_>, hashes: Vec<isize>) -> PyResult<()> {
        let n = hashes.len();
        self.slots = vec![(0, 0); (2 * n).next_power_of_two().max(16)];
        let mask = self.slots.len() - 1;
        let block_of = |node: usize| home(hashes[node], mask) / FILL_BLOCK;
        // `starts[b + 1]` counts block `b`'s nodes, then `starts[b]` is
        // where they go, moving on as they are put.
        let mut starts = vec![0_u32; self.slots.len() / FILL_BLOCK + 1];
        for node in 0..n {
            check_every(py, node)?;
            starts[block_of(node) + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let mut by_block = vec![0_u32; n];
        for node in 0..n {
            check_every(py, node)?;
            let start = &mut starts[block_of(node)];
            by_block[*start as usize] = node as u32;
            *start += 1;
        }
        for (step, &node) in by_block.iter().enumerate() {
            check_every(py, step)?;
            place(&mut self.slots, hashes[node as usize], node);
        }
        self.hashes = hashes;
        Ok(())
    }

    /// Registers the next node (an external key), whose key hashes to
    /// `hash` and is in no slot yet.
    pub(crate) fn push(&mut self, hash: isize) {
        if 2 * (self.hashes.len() + 1) > self.slots.len() {
            let mut grown = vec![(0, 0); 2 * self.slots.len()];
            for (node, &h) in self.hashes.iter().enumerate() {
                place(&mut grown, h, node as u32);
            }
            self.slots = grown;
        }
        place(&mut self.slots, hash, self.hashes.len() as u32);
        self.hashes.push(hash);
    }

    /// Each node's `hash()` of its key.
    pub(crate) fn hashes(&self) -> &[isize] {
        &self.hashes
    }

    /// Loads, for each hash, the slot where its probe starts and the key
    /// object there if the hash matches: one independent load after another,
    /// so that the processor waits for their cache misses together, and the
    /// [`find`](Self::find)s that follow find them in the cache. (Done one
    /// at a time inside `find`, between calls into Python, each miss is
    /// waited for alone: in a graph of a million keys the slots and the keys
    /// are far apart in memory.)
    pub(crate) fn warm<'py>(
        &self,
        keys: &[Bound<'py, PyAny>],
        hashes: impl Iterator<Item = isize>,
    ) {
        let mask = self.slots.len() - 1;
        let mut loaded = 0_usize;
        for hash in hashes {
            let (low, node) = self.slots[home(hash, mask)];
            if node != 0 && low == hash as u32 {
                loaded ^= keys[node as usize - 1].get_type_ptr() as usize;
            }
        }
        // The loads are the point: keep them from being optimised away.
        std::hint::black_box(loaded);
    }

    /// The node whose key is `obj` (with hash `hash`), if any.
    pub(crate) fn find<'py>(
        &self,
        keys: &[Bound<'py, PyAny>],
        hash: isize,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<Option<u32>> {
        let mask = self.slots.len() - 1;
        let mut pos = home(hash, mask);
        loop {
            let (low, node) = self.slots[pos];
            if node == 0 {
                return Ok(None);
            }
            // The low half of the hash picks candidates; `==` decides, as
            // in a dict.
            if low == hash as u32 {
                let key = &keys[node as usize - 1];
                if key.is(obj) || key.eq(obj)? {
                    return Ok(Some(node - 1));
                }
            }
            pos = (pos + 1) & mask;
        }
    }
}

/// Puts `node` in the first free slot from its hash's home.
fn place(slots: &mut [(u32, u32)], hash: isize, node: u32) {
    let mask = slots.len() - 1;
    let mut pos = home(hash, mask);
    while slots[pos].1 != 0 {
        pos = (pos + 1) & mask;
    }
    slots[pos] = (hash as u32, node + 1);
}
