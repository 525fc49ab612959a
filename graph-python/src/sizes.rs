//! The bytes of each task's result, for orders that weigh results by size:
//! given by the caller (`sizes=`), found in the chunk metadata of dask array
//! layers, and estimated for the rest with `graph_order::fill_sizes`.
//!
//! The layers are listed in Python (`taskgraph._sizes.chunk_layers`, a loop
//! over layers); the keys are matched to them here, one pass over the keys.

use std::sync::Arc;

use graph_core::Key;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyMapping, PyString, PyTuple};
use rustc_hash::FxHashMap;

use crate::export::chunk_lengths;
use crate::key_index::KeyIndex;
use crate::signals::check_every;

/// What a graph's sizes come from, as Python asked.
pub(crate) enum Sizing<'py> {
    /// Count results (`sizes=False`): no sizes at all.
    Count,
    /// Sizes from `given` (a mapping from key to bytes), if any, and from
    /// the array layers `layers` (`(name, chunks, itemsize)` triples) for
    /// the keys it leaves out.
    Find {
        given: Option<Bound<'py, PyAny>>,
        layers: Option<Bound<'py, PyAny>>,
    },
}

impl<'py> Sizing<'py> {
    /// Reads `sizes=` (None, False or a mapping) and `layers=` (None: the
    /// layers `taskgraph._sizes.chunk_layers` finds in `dsk`, which a plain
    /// dict has none of).
    pub(crate) fn new(
        dsk: &Bound<'py, PyAny>,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Sizing<'py>> {
        let py = dsk.py();
        let given = match sizes {
            None => None,
            Some(sizes) if sizes.is_none() => None,
            Some(sizes) if sizes.is_instance_of::<PyBool>() => {
                if sizes.is_truthy()? {
                    return Err(PyTypeError::new_err(
                        "sizes must map keys to bytes, or be None (the sizes that can be found) or False (none)",
                    ));
                }
                return Ok(Sizing::Count);
            }
            Some(sizes) => {
                if sizes.cast::<PyDict>().is_err() && sizes.cast::<PyMapping>().is_err() {
                    return Err(PyTypeError::new_err(format!(
                        "sizes must map keys to bytes (a dict), not {}",
                        sizes.get_type().name()?
                    )));
                }
                Some(sizes.clone())
            }
        };
        let layers = match layers {
            Some(layers) if !layers.is_none() => Some(layers.clone()),
            _ if dsk.is_exact_instance_of::<PyDict>() => None,
            _ => Some(
                py.import(intern!(py, "taskgraph._sizes"))?
                    .call_method1(intern!(py, "chunk_layers"), (dsk,))?,
            ),
        };
        Ok(Sizing::Find { given, layers })
    }
}

/// The sizes of a graph's nodes; every vector is empty when no size is
/// known (orders then count results), else holds one entry per node.
#[derive(Default)]
pub(crate) struct Sizes {
    /// The sizes given or found.
    pub(crate) known: Vec<Option<u64>>,
    /// Every node's size: the known ones, the rest estimated.
    pub(crate) filled: Vec<u64>,
    /// Each node's group (dask's `key_split` of its key), by which the
    /// unknown sizes were estimated.
    pub(crate) groups: Vec<u32>,
}

impl Sizes {
    /// The sizes of the nodes whose keys are `keys` (indexed by `index`),
    /// as `sizing` asks. Raises naming the key for a size that is not a
    /// count of bytes, or given for a key the graph lacks.
    pub(crate) fn read<'py>(
        sizing: &Sizing<'py>,
        keys: &[Bound<'py, PyAny>],
        index: &KeyIndex,
    ) -> PyResult<Sizes> {
        let Sizing::Find { given, layers } = sizing else {
            return Ok(Sizes::default());
        };
        if given.is_none() && layers.is_none() {
            return Ok(Sizes::default());
        }
        let mut known = vec![None; keys.len()];
        // The sizes given are read first, so that a bad one raises before
        // any other work, and win over those found.
        if let Some(given) = given {
            read_given(given, keys, index, &mut known)?;
        }
        let layers = match layers {
            Some(layers) => Some(Layers::read(layers)?).filter(|l| !l.by_name.is_empty()),
            None => None,
        };
        if layers.is_none() && known.iter().all(Option::is_none) {
            return Ok(Sizes::default());
        }
        // The groups estimate the sizes not known, and are the scheduler's
        // kinds (see `execute`), so they are made even when all are known.
        let groups = scan(keys, layers.as_ref(), &mut known)?;
        if known.iter().all(Option::is_none) {
            return Ok(Sizes::default());
        }
        let filled = graph_order::fill_sizes(&known, &groups)
            .map_err(|err| PyValueError::new_err(err.to_string()))?
            .unwrap_or_default();
        Ok(Sizes {
            known,
            filled,
            groups,
        })
    }

    /// Whether any size is known.
    pub(crate) fn any(&self) -> bool {
        !self.filled.is_empty()
    }

    /// The filled sizes of the first `n` nodes (empty when none is known).
    pub(crate) fn first(&self, n: usize) -> &[u64] {
        if self.filled.is_empty() {
            &[]
        } else {
            &self.filled[..n]
        }
    }
}

/// `repr(key)`, for messages.
fn spelled(key: &Bound<'_, PyAny>) -> String {
    key.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<key>".to_owned())
}

/// Reads the sizes a caller gave into `known`: every key must be one of
/// `keys`, every size None (unknown) or an integer of bytes.
fn read_given<'py>(
    given: &Bound<'py, PyAny>,
    keys: &[Bound<'py, PyAny>],
    index: &KeyIndex,
    known: &mut [Option<u64>],
) -> PyResult<()> {
    let py = given.py();
    for item in given.call_method0(intern!(py, "items"))?.try_iter()? {
        let item = item?;
        let item = item.cast::<PyTuple>()?;
        let key = item.get_item(0)?;
        let value = item.get_item(1)?;
        let node = match key.hash() {
            Ok(hash) => index.find(keys, hash, &key)?,
            Err(err) if err.is_instance_of::<PyTypeError>(py) => None,
            Err(err) => return Err(err),
        };
        let Some(node) = node else {
            return Err(PyKeyError::new_err(format!(
                "sizes gives a size for {}, which is not a key of the graph",
                spelled(&key)
            )));
        };
        if value.is_none() {
            continue;
        }
        let not_bytes = || {
            PyTypeError::new_err(format!(
                "the size of key {} must be an int (bytes), not {}",
                spelled(&key),
                spelled(&value)
            ))
        };
        if value.is_instance_of::<PyBool>() {
            return Err(not_bytes());
        }
        // Any integer (numpy's too), and nothing that is not one (a float
        // of bytes is refused rather than rounded).
        let int = value
            .call_method0(intern!(py, "__index__"))
            .map_err(|_| not_bytes())?;
        let bytes = int.extract::<u64>().map_err(|_| {
            PyValueError::new_err(format!(
                "the size of key {} is {}: sizes are bytes, from 0 to 2**64 - 1",
                spelled(&key),
                spelled(&value)
            ))
        })?;
        known[node as usize] = Some(bytes);
    }
    Ok(())
}

/// An array layer's chunks: the lengths along each axis (`None` where dask
/// does not know one) and the bytes of one item.
struct Chunks {
    lengths: Vec<Vec<Option<u64>>>,
    itemsize: u64,
}

impl Chunks {
    /// The bytes of the chunk that `key`, a tuple `(name, i, j, ...)`,
    /// names, if it names one of known lengths.
    fn bytes_of(&self, key: &Bound<'_, PyTuple>) -> Option<u64> {
        if key.len() != self.lengths.len() + 1 {
            return None;
        }
        let mut cells = 1_u64;
        for (axis, lengths) in self.lengths.iter().enumerate() {
            let at: usize = key.get_borrowed_item(axis + 1).ok()?.extract().ok()?;
            cells = cells.checked_mul((*lengths.get(at)?)?)?;
        }
        cells.checked_mul(self.itemsize)
    }
}

/// The array layers of a graph, by name.
struct Layers {
    by_name: FxHashMap<String, Chunks>,
}

impl Layers {
    /// Reads `(name, chunks, itemsize)` triples; those that are not (a
    /// chunks tuple that is no tuple of tuples, say) are passed over.
    fn read(layers: &Bound<'_, PyAny>) -> PyResult<Layers> {
        let mut by_name = FxHashMap::default();
        for layer in layers.try_iter()? {
            let layer = layer?;
            let Ok((name, chunks, itemsize)) = layer.extract::<(String, Bound<'_, PyAny>, u64)>()
            else {
                continue;
            };
            if let Ok(lengths) = chunk_lengths(&chunks) {
                by_name.insert(name, Chunks { lengths, itemsize });
            }
        }
        Ok(Layers { by_name })
    }

    /// The layer named `name`, or else the one whose name ends `name` after
    /// a `-`: dask's linear fusion names a fused chain `a-b-<top>`, where
    /// `<top>` is the name of the chain's last task, whose result it gives.
    fn find(&self, name: &str) -> Option<&Chunks> {
        if let Some(chunks) = self.by_name.get(name) {
            return Some(chunks);
        }
        name.match_indices('-')
            .find_map(|(at, _)| self.by_name.get(&name[at + 1..]))
    }
}

/// Each key's group, dask's `key_split` of it (of a tuple key, of its
/// first part), numbered in the order met. Looks for signals as it goes.
pub(crate) fn groups(keys: &[Bound<'_, PyAny>]) -> PyResult<Vec<u32>> {
    scan(keys, None, &mut vec![None; keys.len()])
}

/// One pass over the keys: the size of every key that names a chunk of a
/// layer of `layers` (into `known`), and each key's group, dask's
/// `key_split` of it (of a tuple key, of its first part), numbered in the
/// order met. Looks for signals as it goes.
fn scan(
    keys: &[Bound<'_, PyAny>],
    layers: Option<&Layers>,
    known: &mut [Option<u64>],
) -> PyResult<Vec<u32>> {
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut groups = Vec::with_capacity(keys.len());
    // The keys of one layer share their name object and mostly come one
    // after another: the last name's group and layer are kept.
    let mut last: (usize, u32, Option<&Chunks>) = (0, 0, None);
    for (step, (key, size)) in keys.iter().zip(known.iter_mut()).enumerate() {
        check_every(key.py(), step)?;
        let tuple = key.cast::<PyTuple>().ok().filter(|t| !t.is_empty());
        let name = match tuple {
            Some(tuple) => tuple.get_borrowed_item(0).ok(),
            None => Some(key.as_borrowed()),
        };
        let Some(name) = name.as_ref().and_then(|n| n.cast::<PyString>().ok()) else {
            groups.push(group_id(&mut ids, "Other".to_owned()));
            continue;
        };
        let address = name.as_ptr() as usize;
        if address != last.0 {
            let text = name.to_str().ok();
            let split = match text {
                Some(text) => graph_optimize::key_split(&Key::Str(Arc::from(text))),
                None => "Other".to_owned(),
            };
            let chunks = match (text, tuple, layers) {
                (Some(text), Some(_), Some(layers)) => layers.find(text),
                _ => None,
            };
            last = (address, group_id(&mut ids, split), chunks);
        }
        groups.push(last.1);
        if let (Some(chunks), Some(tuple)) = (last.2, tuple)
            && size.is_none()
        {
            *size = chunks.bytes_of(tuple);
        }
    }
    Ok(groups)
}

/// The number of the group `name`, a new one if it is new.
fn group_id(ids: &mut FxHashMap<String, u32>, name: String) -> u32 {
    let next = ids.len() as u32;
    *ids.entry(name).or_insert(next)
}
