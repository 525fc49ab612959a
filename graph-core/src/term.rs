//! `Term`: the body of a task, a small expression tree, and `Op`, the name of
//! the function a call applies.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::{Key, Value};

/// The name of an operation, shared rather than copied: a graph of a million
/// `add` calls holds one `"add"` string.
///
/// Two ops are equal when their names are; interning only saves memory and
/// makes equal names compare by pointer first.
#[derive(Clone, Debug)]
pub struct Op(Arc<str>);

impl Op {
    /// Makes an op from a name. Prefer an [`OpInterner`] when making many.
    pub fn new(name: &str) -> Op {
        Op(name.into())
    }

    /// The op's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Op {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for Op {}

impl Hash for Op {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialOrd for Op {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Op {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Op {
    fn from(name: &str) -> Op {
        Op::new(name)
    }
}

/// Hands out one shared string per distinct text: op names, and the names in
/// keys. A reader of a million tasks named `('x', i, j)` holds one `"x"`.
#[derive(Debug, Default)]
pub struct OpInterner {
    strings: FxHashSet<Arc<str>>,
}

impl Op {
    #[cfg(feature = "json")]
    /// The op named by a string already shared.
    pub(crate) fn from_shared(name: Arc<str>) -> Op {
        Op(name)
    }
}

impl OpInterner {
    /// The op named `name`, shared with every earlier op of that name.
    pub fn intern(&mut self, name: &str) -> Op {
        Op(self.intern_str(name))
    }

    /// The shared copy of `text`.
    pub fn intern_str(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.strings.get(text) {
            return shared.clone();
        }
        let shared: Arc<str> = text.into();
        self.strings.insert(shared.clone());
        shared
    }
}

/// The body of a task: a literal, a reference to another task's result, a call
/// of an op on argument terms, or a list of terms.
///
/// The dependencies of a task are the keys its term references (minus the task's
/// own key). [`Display`](fmt::Display) writes calls as `op(arg, ...)`, lists as
/// `[...]`, literals in Python's spelling and references as the key's Python
/// `str`, so `count(words, 'pear')` counts the literal `'pear'` in task `words`.
///
/// # Example
///
/// ```
/// use graph_core::{Key, Term};
///
/// let term = Term::call("count", [Term::key("words"), Term::lit("pear")]);
/// assert_eq!(term.to_string(), "count(words, 'pear')");
/// let refs: Vec<&Key> = term.refs().collect();
/// assert_eq!(refs, [&Key::from("words")]);
/// ```
#[derive(Debug)]
pub enum Term {
    /// A literal value.
    Lit(Value),
    /// The result of the task with this key.
    Ref(Key),
    /// `op(args...)`.
    Call {
        /// The operation applied.
        op: Op,
        /// Its arguments, in order.
        args: Vec<Term>,
    },
    /// A list of terms, evaluated element by element.
    List(Vec<Term>),
}

impl Term {
    /// A literal term.
    pub fn lit(value: impl Into<Value>) -> Term {
        Term::Lit(value.into())
    }

    /// A reference to the result of task `key`.
    pub fn key(key: impl Into<Key>) -> Term {
        Term::Ref(key.into())
    }

    /// A call of `op` on `args`.
    pub fn call(op: impl Into<Op>, args: impl IntoIterator<Item = Term>) -> Term {
        Term::Call {
            op: op.into(),
            args: args.into_iter().collect(),
        }
    }

    /// A list of terms.
    pub fn list(items: impl IntoIterator<Item = Term>) -> Term {
        Term::List(items.into_iter().collect())
    }

    /// Every key this term references, in preorder, repeats included.
    pub fn refs(&self) -> Refs<'_> {
        Refs { stack: vec![self] }
    }

    /// Calls `f` on every key this term references, in preorder, without
    /// allocating.
    pub fn for_each_ref(&self, f: &mut impl FnMut(&Key)) {
        match self {
            Term::Lit(_) => {}
            Term::Ref(key) => f(key),
            Term::Call { args: items, .. } | Term::List(items) => {
                for item in items {
                    item.for_each_ref(f);
                }
            }
        }
    }

    /// Whether the term references no key.
    pub fn is_constant(&self) -> bool {
        match self {
            Term::Lit(_) => true,
            Term::Ref(_) => false,
            Term::Call { args: items, .. } | Term::List(items) => {
                items.iter().all(Term::is_constant)
            }
        }
    }

    /// Whether the term is a literal value: no reference and no call
    /// anywhere in it (a literal, or a list of literals). dask calls the
    /// tasks that are such values data nodes (a `DataNode`, or a value that
    /// is not a task), and orders them apart.
    ///
    /// ```
    /// use graph_core::Term;
    ///
    /// assert!(Term::list([Term::lit(1), Term::list([Term::lit("a")])]).is_literal());
    /// assert!(!Term::list([Term::key("x")]).is_literal());
    /// assert!(!Term::call("now", []).is_literal());
    /// ```
    pub fn is_literal(&self) -> bool {
        let mut stack = vec![self];
        while let Some(term) = stack.pop() {
            match term {
                Term::Lit(_) => {}
                Term::Ref(_) | Term::Call { .. } => return false,
                Term::List(items) => stack.extend(items),
            }
        }
        true
    }

    /// The number of nodes in the term tree.
    pub fn size(&self) -> usize {
        match self {
            Term::Lit(_) | Term::Ref(_) => 1,
            Term::Call { args: items, .. } | Term::List(items) => {
                1 + items.iter().map(Term::size).sum::<usize>()
            }
        }
    }

    /// How many calls and lists the term nests, one inside the next: `0` for
    /// a literal or a reference. Terms are walked, copied and dropped by
    /// recursion, one stack frame per level, so this is what bounds the
    /// stack they need.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::Term;
    ///
    /// let term = Term::call("add", [Term::call("inc", [Term::key("x")]), Term::lit(1)]);
    /// assert_eq!(term.nesting(), 2);
    /// assert_eq!(Term::key("x").nesting(), 0);
    /// ```
    pub fn nesting(&self) -> usize {
        if let Some(nesting) = shallow_depth(self, SHALLOW, &|_| 0) {
            return nesting;
        }
        // An explicit stack: a term may nest deeper than a thread's stack.
        let mut deepest = 0;
        let mut stack = vec![(self, 0_usize)];
        while let Some((term, depth)) = stack.pop() {
            if let Term::Call { args: items, .. } | Term::List(items) = term {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
        }
        deepest
    }

    /// How many levels the term takes in `taskgraph-json/1`: each term
    /// object (`ref`, `call`, `list`) is one, and each array of a key in a
    /// reference another, as [`MAX_NESTING`](crate::MAX_NESTING)
    /// counts them.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::Term;
    ///
    /// // call -> ref -> ('x', 0)
    /// assert_eq!(Term::call("inc", [Term::key(("x", 0))]).levels(), 3);
    /// assert_eq!(Term::lit(1).levels(), 0);
    /// ```
    pub fn levels(&self) -> usize {
        if let Some(levels) = shallow_depth(self, SHALLOW, &|key| 1 + key.nesting()) {
            return levels;
        }
        let mut deepest = 0;
        let mut stack = vec![(self, 0_usize)];
        while let Some((term, depth)) = stack.pop() {
            match term {
                Term::Lit(_) => {}
                Term::Ref(key) => deepest = deepest.max(depth + 1 + key.nesting()),
                Term::Call { args: items, .. } | Term::List(items) => {
                    deepest = deepest.max(depth + 1);
                    stack.extend(items.iter().map(|item| (item, depth + 1)));
                }
            }
        }
        deepest
    }
}

/// How deep the walks of a term recurse before they go on with a stack of
/// their own: terms of this depth, nearly all, are walked without allocating,
/// and no walk recurses further, however deep the term.
const SHALLOW: u32 = 32;

/// The depth of `term` in calls and lists (a reference counting
/// `reference(key)`), by recursion at most `budget` levels deep; `None` if
/// it goes deeper.
fn shallow_depth(term: &Term, budget: u32, reference: &impl Fn(&Key) -> usize) -> Option<usize> {
    match term {
        Term::Lit(_) => Some(0),
        Term::Ref(key) => Some(reference(key)),
        Term::Call { args: items, .. } | Term::List(items) => {
            let budget = budget.checked_sub(1)?;
            let mut deepest = 0;
            for item in items {
                deepest = deepest.max(shallow_depth(item, budget, reference)?);
            }
            Some(1 + deepest)
        }
    }
}

/// The iterator of [`Term::refs`].
#[derive(Debug)]
pub struct Refs<'a> {
    stack: Vec<&'a Term>,
}

impl<'a> Iterator for Refs<'a> {
    type Item = &'a Key;

    fn next(&mut self) -> Option<&'a Key> {
        while let Some(term) = self.stack.pop() {
            match term {
                Term::Lit(_) => {}
                Term::Ref(key) => return Some(key),
                Term::Call { args: items, .. } | Term::List(items) => {
                    self.stack.extend(items.iter().rev());
                }
            }
        }
        None
    }
}

impl fmt::Display for Term {
    /// Written with a stack of its own: a term may nest deeper than a
    /// thread's stack.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Piece<'a> {
            Term(&'a Term),
            Text(&'static str),
        }
        let mut stack = vec![Piece::Term(self)];
        while let Some(piece) = stack.pop() {
            let term = match piece {
                Piece::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Piece::Term(term) => term,
            };
            let (items, close) = match term {
                Term::Lit(value) => {
                    write!(f, "{value}")?;
                    continue;
                }
                Term::Ref(Key::Str(name)) => {
                    f.write_str(name)?;
                    continue;
                }
                Term::Ref(key) => {
                    write!(f, "{key}")?;
                    continue;
                }
                Term::Call { op, args } => {
                    write!(f, "{op}(")?;
                    (args, ")")
                }
                Term::List(items) => {
                    f.write_str("[")?;
                    (items, "]")
                }
            };
            stack.push(Piece::Text(close));
            for (i, item) in items.iter().enumerate().rev() {
                stack.push(Piece::Term(item));
                if i > 0 {
                    stack.push(Piece::Text(", "));
                }
            }
        }
        Ok(())
    }
}

impl From<Value> for Term {
    fn from(value: Value) -> Term {
        Term::Lit(value)
    }
}

/// A copy of the term, made with a stack of its own (a term may nest
/// deeper than a thread's stack); a call or list of literals and references
/// is copied directly.
impl Clone for Term {
    fn clone(&self) -> Term {
        clone_bounded(self, SHALLOW)
    }
}

/// A copy of `term` by recursion at most `budget` levels deep, the terms
/// below copied with a stack of their own.
fn clone_bounded(term: &Term, budget: u32) -> Term {
    match term {
        Term::Call { args: items, .. } | Term::List(items) => match budget.checked_sub(1) {
            Some(budget) => rebuild(
                term,
                items
                    .iter()
                    .map(|item| clone_bounded(item, budget))
                    .collect(),
            ),
            None => clone_deep(term),
        },
        leaf => shallow_clone(leaf),
    }
}

fn is_leaf(term: &Term) -> bool {
    matches!(term, Term::Lit(_) | Term::Ref(_))
}

/// A literal or reference copied; a call or list copied without its items.
fn shallow_clone(term: &Term) -> Term {
    match term {
        Term::Lit(value) => Term::Lit(value.clone()),
        Term::Ref(key) => Term::Ref(key.clone()),
        Term::Call { op, .. } => Term::Call {
            op: op.clone(),
            args: Vec::new(),
        },
        Term::List(_) => Term::List(Vec::new()),
    }
}

/// `like` (a call or list) with `items` in place of its own.
fn rebuild(like: &Term, items: Vec<Term>) -> Term {
    match like {
        Term::Call { op, .. } => Term::Call {
            op: op.clone(),
            args: items,
        },
        _ => Term::List(items),
    }
}

fn clone_deep(root: &Term) -> Term {
    enum Step<'a> {
        Enter(&'a Term),
        /// Put the last `n` terms built into a copy of this call or list.
        Build(&'a Term, usize),
    }
    let mut steps = vec![Step::Enter(root)];
    let mut built: Vec<Term> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(term) => match term {
                Term::Call { args: items, .. } | Term::List(items) => {
                    steps.push(Step::Build(term, items.len()));
                    steps.extend(items.iter().rev().map(Step::Enter));
                }
                leaf => built.push(shallow_clone(leaf)),
            },
            Step::Build(term, n) => {
                let items = built.split_off(built.len() - n);
                built.push(rebuild(term, items));
            }
        }
    }
    built.pop().expect("the root was built")
}

/// Terms are equal when they have the same shape, ops, literals and
/// references, compared with a stack of their own.
impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        eq_bounded(self, other, SHALLOW)
    }
}

/// Whether two terms are equal, compared by recursion at most `budget`
/// levels deep, the terms below with a stack of their own.
fn eq_bounded(a: &Term, b: &Term, budget: u32) -> bool {
    match (a, b) {
        (Term::Lit(a), Term::Lit(b)) => a == b,
        (Term::Ref(a), Term::Ref(b)) => a == b,
        (Term::Call { op: p, args: x }, Term::Call { op: q, args: y }) if p != q => false,
        (Term::Call { args: x, .. }, Term::Call { args: y, .. })
        | (Term::List(x), Term::List(y)) => {
            x.len() == y.len()
                && match budget.checked_sub(1) {
                    Some(budget) => x.iter().zip(y).all(|(a, b)| eq_bounded(a, b, budget)),
                    None => eq_deep(a, b),
                }
        }
        _ => false,
    }
}

fn eq_deep(a: &Term, b: &Term) -> bool {
    let mut stack = vec![(a, b)];
    while let Some(pair) = stack.pop() {
        match pair {
            (Term::Lit(a), Term::Lit(b)) if a == b => {}
            (Term::Ref(a), Term::Ref(b)) if a == b => {}
            (Term::Call { op: a, args: x }, Term::Call { op: b, args: y })
                if a == b && x.len() == y.len() =>
            {
                stack.extend(x.iter().zip(y));
            }
            (Term::List(x), Term::List(y)) if x.len() == y.len() => stack.extend(x.iter().zip(y)),
            _ => return false,
        }
    }
    true
}

/// Dropping a term recurses into the calls and lists it holds at most
/// 32 levels deep (a count kept per thread); below that it takes
/// them apart with a stack of its own, so that a term nested however deep
/// (one a rewrite grew past the limit, say) is freed without deep recursion.
impl Drop for Term {
    fn drop(&mut self) {
        let (Term::Call { args: items, .. } | Term::List(items)) = self else {
            return;
        };
        if items.iter().all(is_leaf) {
            return;
        }
        let depth = DROP_DEPTH.get();
        if depth < SHALLOW {
            DROP_DEPTH.set(depth + 1);
            // Each item drops through this function, one level deeper.
            drop(std::mem::take(items));
            DROP_DEPTH.set(depth);
            return;
        }
        let mut stack: Vec<Term> = std::mem::take(items);
        while let Some(mut term) = stack.pop() {
            if let Term::Call { args: items, .. } | Term::List(items) = &mut term {
                stack.append(items);
            }
        }
    }
}

thread_local! {
    /// How many drops of terms are under way on this thread, one inside the
    /// next.
    static DROP_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}
