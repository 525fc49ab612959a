//! `Head`, `args` and `Traverser`: a term seen as the preorder sequence of its
//! heads, which is what the discrimination net is built over.

use graph_core::{Key, Op, Term, Value};

/// The top node of a term without its children (dask's `head`), with the
/// number of children: what one edge of the discrimination net is labelled
/// with.
///
/// dask's `head` gives the function of a task, `list` for a list, and the term
/// itself otherwise; it has no arity, and a list's head is the same as a
/// call to `list`'s. Here both carry their arity and stay distinct.
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_rewrite::Head;
///
/// let term = Term::call("add", [Term::lit(1), Term::lit(2)]);
/// assert_eq!(Head::of(&term).to_string(), "add/2");
/// let list = Term::list([Term::lit(1), Term::lit(2), Term::lit(3)]);
/// assert_eq!(Head::of(&list).to_string(), "list/3");
/// assert_eq!(Head::of(&Term::lit(1)).to_string(), "1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Head<'a> {
    /// A call of `op` on `arity` arguments.
    Call {
        /// The op.
        op: &'a Op,
        /// The number of arguments.
        arity: usize,
    },
    /// A list of this many items.
    List(usize),
    /// A literal.
    Lit(&'a Value),
    /// A reference to a task.
    Ref(&'a Key),
}

impl<'a> Head<'a> {
    /// The head of `term`.
    pub fn of(term: &'a Term) -> Head<'a> {
        match term {
            Term::Call { op, args } => Head::Call {
                op,
                arity: args.len(),
            },
            Term::List(items) => Head::List(items.len()),
            Term::Lit(value) => Head::Lit(value),
            Term::Ref(key) => Head::Ref(key),
        }
    }
}

impl std::fmt::Display for Head<'_> {
    /// `op/arity` for a call, `list/n` for a list, the term for a leaf.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Head::Call { op, arity } => write!(f, "{op}/{arity}"),
            Head::List(len) => write!(f, "list/{len}"),
            Head::Lit(value) => write!(f, "{value}"),
            Head::Ref(key) => write!(f, "{}", Term::Ref((*key).clone())),
        }
    }
}

/// The children of a term (dask's `args`): a call's arguments, a list's
/// items, nothing for a leaf.
///
/// # Example
///
/// ```
/// use graph_core::Term;
///
/// let term = Term::call("inc", [Term::lit(1)]);
/// assert_eq!(graph_rewrite::args(&term), [Term::lit(1)]);
/// assert!(graph_rewrite::args(&Term::lit(1)).is_empty());
/// ```
pub fn args(term: &Term) -> &[Term] {
    match term {
        Term::Call { args: items, .. } | Term::List(items) => items,
        Term::Lit(_) | Term::Ref(_) => &[],
    }
}

/// A preorder walk over a term's subterms that can skip a subterm and be
/// copied to backtrack (dask's `Traverser`). As an iterator it yields the
/// [`Head`] of each subterm in preorder.
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_rewrite::Traverser;
///
/// let term = Term::call("f", [Term::call("g", [Term::lit(1)]), Term::lit(2)]);
/// let mut walk = Traverser::new(&term);
/// walk.next_term();
/// walk.skip_subterm();
/// assert_eq!(walk.current(), Some(&Term::lit(2)));
/// let heads: Vec<String> = Traverser::new(&term).map(|head| head.to_string()).collect();
/// assert_eq!(heads, ["f/2", "g/1", "1", "2"]);
/// ```
#[derive(Clone, Debug)]
pub struct Traverser<'a> {
    current: Option<&'a Term>,
    /// Subterms still to visit, the next on top.
    pending: Vec<&'a Term>,
}

impl<'a> Traverser<'a> {
    /// A walk starting at the whole of `term`.
    pub fn new(term: &'a Term) -> Traverser<'a> {
        Traverser {
            current: Some(term),
            pending: Vec::new(),
        }
    }

    /// The subterm the walk is at, or `None` at the end.
    pub fn current(&self) -> Option<&'a Term> {
        self.current
    }

    /// The head of the current subterm (dask's `Traverser.current`).
    pub fn current_head(&self) -> Option<Head<'a>> {
        self.current.map(Head::of)
    }

    /// Moves to the next subterm in preorder: the first child, or else the
    /// next subterm after this one (dask's `Traverser.next`).
    pub fn next_term(&mut self) {
        if let Some(term) = self.current {
            let children = args(term);
            match children.split_first() {
                Some((first, rest)) => {
                    self.pending.extend(rest.iter().rev());
                    self.current = Some(first);
                }
                None => self.current = self.pending.pop(),
            }
        }
    }

    /// Moves past the current subterm and all of its children.
    pub fn skip_subterm(&mut self) {
        self.current = self.pending.pop();
    }
}

impl<'a> Iterator for Traverser<'a> {
    type Item = Head<'a>;

    fn next(&mut self) -> Option<Head<'a>> {
        let head = self.current_head()?;
        self.next_term();
        Some(head)
    }
}
