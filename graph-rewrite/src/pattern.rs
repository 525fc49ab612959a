//! `Pattern`: a term with named variables, the left- and right-hand sides of a
//! rewrite rule.

use std::fmt;

use graph_core::{Key, Op, Term, Value};

/// A term that may hold variables: what a rule's left-hand side searches for
/// and what its right-hand side builds.
///
/// A [`Term`] has no variable node, and dask's convention (any hashable named
/// in a rule's `vars` is a variable) would make every string that happens to be
/// a variable's name ambiguous. A pattern names its variables explicitly, so
/// the key `'a'`, the string `'a'` and the variable `?a` are three different
/// things. [`Display`](fmt::Display) writes variables as `?name` and everything
/// else as [`Term`] does.
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_rewrite::Pattern;
///
/// let pattern = Pattern::call("add", [Pattern::var("a"), Pattern::lit(1)]);
/// assert_eq!(pattern.to_string(), "add(?a, 1)");
/// let ground = Pattern::from(Term::call("inc", [Term::key("x")]));
/// assert_eq!(ground.to_string(), "inc(x)");
/// assert_eq!(ground.to_term(), Some(Term::call("inc", [Term::key("x")])));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// A variable: matches any term (a variable used twice matches only equal
    /// terms); in a right-hand side, replaced by what it matched.
    Var(Box<str>),
    /// A literal value: matches an equal literal.
    Lit(Value),
    /// A reference to a task: matches a reference to the same key.
    Ref(Key),
    /// `op(args...)`: matches a call of the same op with as many arguments,
    /// each matching.
    Call {
        /// The operation.
        op: Op,
        /// The argument patterns.
        args: Vec<Pattern>,
    },
    /// `[items...]`: matches a list of as many items, each matching.
    List(Vec<Pattern>),
}

impl Pattern {
    /// A variable named `name`.
    pub fn var(name: &str) -> Pattern {
        Pattern::Var(name.into())
    }

    /// A literal.
    pub fn lit(value: impl Into<Value>) -> Pattern {
        Pattern::Lit(value.into())
    }

    /// A reference to task `key`.
    pub fn key(key: impl Into<Key>) -> Pattern {
        Pattern::Ref(key.into())
    }

    /// A call of `op` on `args`.
    pub fn call(op: impl Into<Op>, args: impl IntoIterator<Item = Pattern>) -> Pattern {
        Pattern::Call {
            op: op.into(),
            args: args.into_iter().collect(),
        }
    }

    /// A list of patterns.
    pub fn list(items: impl IntoIterator<Item = Pattern>) -> Pattern {
        Pattern::List(items.into_iter().collect())
    }

    /// Every variable occurrence, in preorder, repeats included: dask's
    /// `RewriteRule._varlist`.
    pub fn var_occurrences(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.for_each_var(&mut |name| out.push(name));
        out
    }

    /// Calls `f` on every variable occurrence, in preorder.
    pub fn for_each_var<'a>(&'a self, f: &mut impl FnMut(&'a str)) {
        match self {
            Pattern::Var(name) => f(name),
            Pattern::Lit(_) | Pattern::Ref(_) => {}
            Pattern::Call { args: items, .. } | Pattern::List(items) => {
                for item in items {
                    item.for_each_var(f);
                }
            }
        }
    }

    /// Whether the pattern has no variable.
    pub fn is_ground(&self) -> bool {
        match self {
            Pattern::Var(_) => false,
            Pattern::Lit(_) | Pattern::Ref(_) => true,
            Pattern::Call { args: items, .. } | Pattern::List(items) => {
                items.iter().all(Pattern::is_ground)
            }
        }
    }

    /// The term this pattern spells, if it has no variable.
    pub fn to_term(&self) -> Option<Term> {
        Some(match self {
            Pattern::Var(_) => return None,
            Pattern::Lit(value) => Term::Lit(value.clone()),
            Pattern::Ref(key) => Term::Ref(key.clone()),
            Pattern::Call { op, args } => Term::Call {
                op: op.clone(),
                args: args.iter().map(Pattern::to_term).collect::<Option<_>>()?,
            },
            Pattern::List(items) => {
                Term::List(items.iter().map(Pattern::to_term).collect::<Option<_>>()?)
            }
        })
    }

    /// The number of nodes in the pattern tree.
    pub fn size(&self) -> usize {
        match self {
            Pattern::Var(_) | Pattern::Lit(_) | Pattern::Ref(_) => 1,
            Pattern::Call { args: items, .. } | Pattern::List(items) => {
                1 + items.iter().map(Pattern::size).sum::<usize>()
            }
        }
    }
}

/// A term as a pattern without variables.
impl From<Term> for Pattern {
    fn from(mut term: Term) -> Pattern {
        // A term frees its own parts (without recursion), so they are taken
        // out of it rather than moved.
        match &mut term {
            Term::Lit(value) => Pattern::Lit(std::mem::replace(value, graph_core::Value::Null)),
            Term::Ref(key) => Pattern::Ref(key.clone()),
            Term::Call { op, args } => Pattern::Call {
                op: op.clone(),
                args: std::mem::take(args)
                    .into_iter()
                    .map(Pattern::from)
                    .collect(),
            },
            Term::List(items) => Pattern::List(
                std::mem::take(items)
                    .into_iter()
                    .map(Pattern::from)
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn write_items(f: &mut fmt::Formatter<'_>, items: &[Pattern]) -> fmt::Result {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{item}")?;
            }
            Ok(())
        }
        match self {
            Pattern::Var(name) => write!(f, "?{name}"),
            Pattern::Lit(value) => write!(f, "{value}"),
            Pattern::Ref(key) => write!(f, "{}", Term::Ref(key.clone())),
            Pattern::Call { op, args } => {
                write!(f, "{op}(")?;
                write_items(f, args)?;
                f.write_str(")")
            }
            Pattern::List(items) => {
                f.write_str("[")?;
                write_items(f, items)?;
                f.write_str("]")
            }
        }
    }
}
