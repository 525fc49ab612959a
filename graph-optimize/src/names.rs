//! dask's naming of fused tasks: `key_split`, and the names `fuse_linear`
//! and `fuse` give the task they build (`a-b-c`), with a stable hash where
//! dask cuts a long name with a per-process random one.

use std::sync::Arc;

use graph_core::Key;
use rustc_hash::{FxHashMap, FxHashSet};

/// dask's default limit on the length of a name `fuse` builds.
pub const MAX_FUSED_KEY_LENGTH: usize = 120;

/// The human part of a key's name, as dask's `dask.utils.key_split` finds it:
/// `'x-1'` and `('x-2', 1)` give `x`, `'hello-world-1'` gives `hello-world`,
/// a 32-character hex name gives `data`, and a key that is not a string (or a
/// tuple starting with one) gives `Other`.
///
/// The rules, in order: a tuple is named by its first part; the name is split
/// at `-`; a first word that does not start with a letter is cut at its first
/// `,` and stripped of `_'()"`; following words are kept while they are all
/// letters and not an 8-letter word starting with `a`-`f` (a hash); a result
/// of 32 lowercase hex digits is `data`; a result starting with `<` (a
/// Python object's repr) is reduced to its last dotted name.
///
/// Differs from dask only where Python's and Rust's notions of "alphabetic"
/// differ (a few Unicode marks).
///
/// **Complexity**: O(length of the name).
///
/// # Example
///
/// ```
/// use graph_core::Key;
/// use graph_optimize::key_split;
///
/// assert_eq!(key_split(&Key::from("x-1")), "x");
/// assert_eq!(key_split(&Key::from(("x-2", 1))), "x");
/// assert_eq!(key_split(&Key::from("hello-world-1")), "hello-world");
/// assert_eq!(key_split(&Key::from("cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88")), "cholesky-upper");
/// assert_eq!(key_split(&Key::from(1)), "Other");
/// ```
pub fn key_split(key: &Key) -> String {
    match key {
        Key::Str(s) => split_name(s).unwrap_or_else(|| "Other".to_owned()),
        Key::Tuple(parts) => match parts.first() {
            Some(first) => key_split(first),
            None => "Other".to_owned(),
        },
        Key::Int(_) | Key::Float(_) => "Other".to_owned(),
    }
}

/// [`key_split`] of a string; `None` where dask's version raises.
fn split_name(s: &str) -> Option<String> {
    let mut words = s.split('-');
    let first = words.next().unwrap_or("");
    let mut result = if !first.chars().next()?.is_alphabetic() {
        first
            .split(',')
            .next()
            .unwrap_or("")
            .trim_matches(|c| matches!(c, '_' | '\'' | '(' | ')' | '"'))
            .to_owned()
    } else {
        first.to_owned()
    };
    for word in words {
        let alphabetic = !word.is_empty() && word.chars().all(char::is_alphabetic);
        let looks_hashed =
            word.chars().count() == 8 && word.starts_with(|c: char| ('a'..='f').contains(&c));
        if alphabetic && !looks_hashed {
            result.push('-');
            result.push_str(word);
        } else {
            break;
        }
    }
    if result.len() == 32
        && result
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Some("data".to_owned());
    }
    if result.starts_with('<') {
        let inner = result.trim_matches(|c| c == '<' || c == '>');
        let word = inner.split_whitespace().next()?;
        return Some(word.rsplit('.').next().unwrap_or(word).to_owned());
    }
    if result.is_empty() {
        return None;
    }
    Some(result)
}

/// The name `fuse_linear` gives a fused chain, as dask's
/// `default_fused_linear_keys_renamer` does: the [`key_split`] names of the
/// upstream tasks, from the most upstream on, then the surviving key's own
/// name, joined by `-`. `chain[0]` is the surviving (most downstream) key.
///
/// `['w', 'x', 'y', 'z']` gives `z-y-x-w`; a tuple survivor keeps its
/// indices: `[('w', 1), ('x', 2), 'y-1']` gives `('y-x-w', 1)`. `None` when
/// the survivor is not a string or a tuple starting with one, or the chain is
/// empty.
///
/// **Complexity**: O(total length of the names).
///
/// # Example
///
/// ```
/// use graph_core::Key;
/// use graph_optimize::fused_linear_name;
///
/// let chain = [Key::from("w"), Key::from("x"), Key::from("y"), Key::from("z")];
/// assert_eq!(fused_linear_name(&chain), Some(Key::from("z-y-x-w")));
/// ```
pub fn fused_linear_name(chain: &[Key]) -> Option<Key> {
    Namer::default().fused_linear_name(chain.iter())
}

/// The name `fuse` gives a fused subgraph, as dask's
/// `default_fused_keys_renamer` does: the distinct [`key_split`] names of the
/// absorbed tasks other than the survivor's own, sorted, then the surviving
/// key's name; names longer than [`MAX_FUSED_KEY_LENGTH`] are cut and given a
/// 4-digit hash suffix. `keys`' last element is the surviving key.
///
/// Differs from dask: dask's suffix comes from Python's `hash`, which is
/// randomized per process; ours is a stable hash (64-bit FNV-1a), so the same
/// graph always gets the same names.
///
/// **Complexity**: O(k log k + total length of the names) for k keys.
///
/// # Example
///
/// ```
/// use graph_core::Key;
/// use graph_optimize::fused_name;
///
/// let keys = [Key::from("b2"), Key::from("b1"), Key::from("c")];
/// assert_eq!(fused_name(&keys), Some(Key::from("b1-b2-c")));
/// let keys = [Key::from(("b-1", 0)), Key::from(("a", 1))];
/// assert_eq!(fused_name(&keys), Some(Key::from(("b-a", 1))));
/// ```
pub fn fused_name(keys: &[Key]) -> Option<Key> {
    let (survivor, rest) = keys.split_last()?;
    Namer::default().fused_name(survivor, rest.iter())
}

/// Names fused tasks as [`fused_name`] and [`fused_linear_name`] do, for a
/// pass that names many: split names are cached by raw name, the names built
/// are interned (the tasks of one layer share one name, as the input's keys
/// do), and scratch space is reused, so that naming a million tasks makes
/// few allocations beyond the keys themselves.
#[derive(Default)]
pub(crate) struct Namer {
    /// Split names' ids, by raw name.
    ids: FxHashMap<Arc<str>, u32>,
    /// Split names, by id.
    splits: Vec<String>,
    /// The names built so far.
    interned: FxHashSet<Arc<str>>,
    /// `Other`, the raw name of keys without a string name.
    other: Option<Arc<str>>,
    /// Scratch: split names' ids, and the name being built.
    scratch: Vec<u32>,
    name: String,
}

impl Namer {
    /// The id of a raw name's split name.
    fn split_id(&mut self, raw: &Arc<str>) -> u32 {
        if let Some(&id) = self.ids.get(raw) {
            return id;
        }
        let id = self.splits.len() as u32;
        self.splits
            .push(split_name(raw).unwrap_or_else(|| "Other".to_owned()));
        self.ids.insert(Arc::clone(raw), id);
        id
    }

    /// The id of a key's split name ([`key_split`]).
    fn key_split_id(&mut self, key: &Key) -> u32 {
        match raw_name(key) {
            Some(raw) => self.split_id(raw),
            None => {
                let other = Arc::clone(self.other.get_or_insert_with(|| Arc::from("Other")));
                self.split_id(&other)
            }
        }
    }

    /// [`fused_name`] of a survivor and the keys it absorbed. Runs of keys
    /// with one raw name (a chain of like tasks) are looked up once.
    pub(crate) fn fused_name<'k>(
        &mut self,
        survivor: &Key,
        rest: impl Iterator<Item = &'k Key>,
    ) -> Option<Key> {
        let (own, _) = survivor_name(survivor)?;
        let own = self.split_id(own);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut last: Option<&Arc<str>> = None;
        for key in rest {
            let raw = raw_name(key);
            if raw.is_some() && raw == last {
                continue;
            }
            last = raw;
            scratch.push(self.key_split_id(key));
        }
        // The distinct split names but the survivor's own, sorted.
        let splits = &self.splits;
        scratch.sort_unstable_by(|&a, &b| splits[a as usize].cmp(&splits[b as usize]));
        scratch.dedup_by(|a, b| splits[*a as usize] == splits[*b as usize]);
        scratch.retain(|&id| splits[id as usize] != splits[own as usize]);
        self.name.clear();
        for &id in &scratch {
            self.name.push_str(&splits[id as usize]);
            self.name.push('-');
        }
        self.scratch = scratch;
        self.finish(survivor, Some(MAX_FUSED_KEY_LENGTH))
    }

    /// [`fused_linear_name`] of a chain's keys, the survivor first.
    pub(crate) fn fused_linear_name<'k>(
        &mut self,
        chain: impl DoubleEndedIterator<Item = &'k Key>,
    ) -> Option<Key> {
        let mut chain = chain;
        let survivor = chain.next()?;
        survivor_name(survivor)?;
        self.name.clear();
        for key in chain.rev() {
            let id = self.key_split_id(key);
            self.name.push_str(&self.splits[id as usize]);
            self.name.push('-');
        }
        self.finish(survivor, None)
    }

    /// Appends the survivor's name to the name being built, cuts it to
    /// `max_length`, and makes the key: a string, or a tuple that keeps the
    /// survivor's other parts.
    fn finish(&mut self, survivor: &Key, max_length: Option<usize>) -> Option<Key> {
        let (own, tail) = survivor_name(survivor)?;
        self.name.push_str(own);
        if let Some(max) = max_length {
            enforce_length(&mut self.name, max);
        }
        let name = match self.interned.get(self.name.as_str()) {
            Some(name) => Arc::clone(name),
            None => {
                let name: Arc<str> = Arc::from(self.name.as_str());
                self.interned.insert(Arc::clone(&name));
                name
            }
        };
        Some(match tail {
            None => Key::Str(name),
            Some(tail) => Key::tuple(std::iter::once(Key::Str(name)).chain(tail.iter().cloned())),
        })
    }
}

/// The string [`key_split`] looks at: the key, or a tuple's first part,
/// recursively; `None` for numbers and empty tuples.
fn raw_name(key: &Key) -> Option<&Arc<str>> {
    match key {
        Key::Str(s) => Some(s),
        Key::Tuple(parts) => parts.first().and_then(raw_name),
        Key::Int(_) | Key::Float(_) => None,
    }
}

/// A fused task's own name and its other parts: a string key has none; a
/// tuple's first part must be a string. `None` for other keys, which are not
/// renamed.
fn survivor_name(survivor: &Key) -> Option<(&Arc<str>, Option<&[Key]>)> {
    match survivor {
        Key::Str(s) => Some((s, None)),
        Key::Tuple(parts) => match parts.first() {
            Some(Key::Str(s)) => Some((s, Some(&parts[1..]))),
            _ => None,
        },
        Key::Int(_) | Key::Float(_) => None,
    }
}

/// Cuts a name longer than `max - 5` characters to that length and appends
/// `-` and 4 hex digits of its stable hash, as dask does with Python's hash.
fn enforce_length(name: &mut String, max: usize) {
    let keep = max.saturating_sub(5);
    if keep == 0 || name.chars().count() <= keep {
        return;
    }
    let hash = stable_hash(name.as_bytes());
    let cut = name
        .char_indices()
        .nth(keep)
        .map_or(name.len(), |(at, _)| at);
    name.truncate(cut);
    name.push('-');
    name.push_str(&format!("{hash:016x}")[..4]);
}

/// 64-bit FNV-1a: stable across processes, machines and versions.
fn stable_hash(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
