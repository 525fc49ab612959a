//! dask's naming of fused tasks: `key_split`, and the names `fuse_linear`
//! and `fuse` give the task they build (`a-b-c`), with a stable hash where
//! dask cuts a long name with a per-process random one.

use graph_core::Key;
use rustc_hash::FxHashMap;

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
    fused_linear_name_of(chain.iter())
}

/// [`fused_linear_name`] of the chain's keys, the survivor first.
pub(crate) fn fused_linear_name_of<'k>(
    chain: impl DoubleEndedIterator<Item = &'k Key>,
) -> Option<Key> {
    let mut chain = chain;
    let survivor = chain.next()?;
    let mut name = String::new();
    for key in chain.rev() {
        name.push_str(&key_split(key));
        name.push('-');
    }
    with_survivor(survivor, name, None)
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
    fused_name_of(survivor, rest.iter())
}

/// [`fused_name`] of a survivor and the keys it absorbed.
pub(crate) fn fused_name_of<'k>(
    survivor: &'k Key,
    rest: impl Iterator<Item = &'k Key>,
) -> Option<Key> {
    Namer::default().fused_name(survivor, rest)
}

/// [`fused_name`] for the many names one pass builds: [`key_split`] results
/// are cached by raw name, and scratch space is reused.
#[derive(Default)]
pub(crate) struct Namer<'k> {
    /// Split names, by raw name.
    cache: FxHashMap<&'k str, u32>,
    splits: Vec<String>,
    /// Scratch: the absorbed keys' raw names, then their split names' ids.
    raw: Vec<&'k str>,
    ids: Vec<u32>,
}

impl<'k> Namer<'k> {
    /// The split name of a raw name, by id.
    fn split_id(&mut self, name: &'k str) -> u32 {
        if let Some(&id) = self.cache.get(name) {
            return id;
        }
        let id = self.splits.len() as u32;
        self.splits
            .push(split_name(name).unwrap_or_else(|| "Other".to_owned()));
        self.cache.insert(name, id);
        id
    }

    /// [`fused_name`] of a survivor and the keys it absorbed. Sorts and
    /// dedups the raw names before splitting them, so that a million tasks
    /// named alike cost a million comparisons, not a million allocations.
    pub(crate) fn fused_name(
        &mut self,
        survivor: &'k Key,
        rest: impl Iterator<Item = &'k Key>,
    ) -> Option<Key> {
        let own = match survivor {
            Key::Str(s) => self.split_id(s),
            Key::Tuple(parts) => match parts.first() {
                Some(Key::Str(s)) => self.split_id(s),
                _ => return None,
            },
            Key::Int(_) | Key::Float(_) => return None,
        };
        // Keys without a string name split to `Other`.
        let mut other = false;
        self.raw.clear();
        for key in rest {
            match raw_name(key) {
                Some(name) => self.raw.push(name),
                None => other = true,
            }
        }
        // Runs of one name are common (a chain of like tasks): drop them
        // before sorting.
        self.raw.dedup();
        self.raw.sort_unstable();
        self.raw.dedup();
        self.ids.clear();
        for i in 0..self.raw.len() {
            let id = self.split_id(self.raw[i]);
            if id != own {
                self.ids.push(id);
            }
        }
        let splits = &self.splits;
        let mut names: Vec<&str> = self.ids.iter().map(|&id| &*splits[id as usize]).collect();
        if other && splits[own as usize] != "Other" {
            names.push("Other");
        }
        names.retain(|name| *name != splits[own as usize]);
        names.sort_unstable();
        names.dedup();
        let mut name = String::new();
        for part in &names {
            name.push_str(part);
            name.push('-');
        }
        with_survivor(survivor, name, Some(MAX_FUSED_KEY_LENGTH))
    }
}

/// The string [`key_split`] looks at: the key, or a tuple's first part,
/// recursively; `None` for numbers and empty tuples.
fn raw_name(key: &Key) -> Option<&str> {
    match key {
        Key::Str(s) => Some(s),
        Key::Tuple(parts) => parts.first().and_then(raw_name),
        Key::Int(_) | Key::Float(_) => None,
    }
}

/// Appends the survivor's name to `prefix` and makes the key: a string, or a
/// tuple that keeps the survivor's other parts.
fn with_survivor(survivor: &Key, mut prefix: String, max_length: Option<usize>) -> Option<Key> {
    let (name, tail) = match survivor {
        Key::Str(s) => (&**s, None),
        Key::Tuple(parts) => match parts.first() {
            Some(Key::Str(s)) => (&**s, Some(&parts[1..])),
            _ => return None,
        },
        Key::Int(_) | Key::Float(_) => return None,
    };
    prefix.push_str(name);
    let name = match max_length {
        Some(max) => enforce_length(prefix, max),
        None => prefix,
    };
    Some(match tail {
        None => Key::from(name),
        Some(tail) => Key::tuple(std::iter::once(Key::from(name)).chain(tail.iter().cloned())),
    })
}

/// Cuts a name longer than `max - 5` characters to that length and appends
/// `-` and 4 hex digits of its stable hash, as dask does with Python's hash.
fn enforce_length(name: String, max: usize) -> String {
    let keep = max.saturating_sub(5);
    if keep == 0 || name.chars().count() <= keep {
        return name;
    }
    let hash = stable_hash(name.as_bytes());
    let mut cut: String = name.chars().take(keep).collect();
    cut.push('-');
    cut.push_str(&format!("{hash:016x}")[..4]);
    cut
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
