//! `RuleSet`: rewrite rules compiled into a discrimination net, and the matcher
//! that walks a term through it.

use std::fmt;
use std::ops::ControlFlow;

use graph_core::{Key, Op, Term, Value};
use rustc_hash::FxHashMap;

use crate::{Bindings, Error, Pattern, RewriteRule};

/// The label of a trie edge: the head of a term node, arity included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sym {
    Call { op: u32, arity: u32 },
    List(u32),
    Lit(u32),
    Ref(u32),
}

/// A literal that is not a string, in a form that hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    /// Bits of a float, with `-0.0` folded into `0.0` (they compare equal).
    Float(u64),
}

fn scalar(value: &Value) -> Option<Scalar> {
    Some(match value {
        Value::Null => Scalar::Null,
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Int(i) => Scalar::Int(*i),
        Value::Float(x) if x.is_nan() => return None,
        Value::Float(x) if *x == 0.0 => Scalar::Float(0),
        Value::Float(x) => Scalar::Float(x.to_bits()),
        Value::Str(_) => return None,
    })
}

/// The ops, literals and keys that occur in the rules' left-hand sides, each
/// numbered once, so that trie edges are small `Copy` labels.
#[derive(Clone, Debug, Default)]
struct Symbols {
    ops: FxHashMap<Box<str>, u32>,
    op_names: Vec<Op>,
    scalars: FxHashMap<Scalar, u32>,
    strs: FxHashMap<Box<str>, u32>,
    lits: Vec<Value>,
    refs: FxHashMap<Key, u32>,
    keys: Vec<Key>,
}

impl Symbols {
    fn intern_pattern(&mut self, pattern: &Pattern) -> Option<Sym> {
        Some(match pattern {
            Pattern::Var(_) => return None,
            Pattern::Call { op, args } => {
                let next = self.op_names.len() as u32;
                let id = *self.ops.entry(op.as_str().into()).or_insert(next);
                if id == next {
                    self.op_names.push(op.clone());
                }
                Sym::Call {
                    op: id,
                    arity: args.len() as u32,
                }
            }
            Pattern::List(items) => Sym::List(items.len() as u32),
            Pattern::Lit(value) => {
                let next = self.lits.len() as u32;
                let id = match (value, scalar(value)) {
                    (Value::Str(s), _) => *self.strs.entry(s.clone()).or_insert(next),
                    (_, Some(scalar)) => *self.scalars.entry(scalar).or_insert(next),
                    // NaN equals nothing, so its edge gets an id no term maps to.
                    (_, None) => next,
                };
                if id == next {
                    self.lits.push(value.clone());
                }
                Sym::Lit(id)
            }
            Pattern::Ref(key) => {
                let next = self.keys.len() as u32;
                let id = *self.refs.entry(key.clone()).or_insert(next);
                if id == next {
                    self.keys.push(key.clone());
                }
                Sym::Ref(id)
            }
        })
    }

    /// The label of a term's head, if any left-hand side has that head.
    #[inline]
    fn of_term(&self, term: &Term) -> Option<Sym> {
        match term {
            Term::Call { op, args } => Some(Sym::Call {
                op: *self.ops.get(op.as_str())?,
                arity: u32::try_from(args.len()).ok()?,
            }),
            Term::List(items) => Some(Sym::List(u32::try_from(items.len()).ok()?)),
            Term::Lit(Value::Str(s)) => self.strs.get(&**s).map(|&id| Sym::Lit(id)),
            Term::Lit(value) => self.scalars.get(&scalar(value)?).map(|&id| Sym::Lit(id)),
            Term::Ref(key) => self.refs.get(key).map(|&id| Sym::Ref(id)),
        }
    }

    fn write_sym(&self, f: &mut fmt::Formatter<'_>, sym: Sym) -> fmt::Result {
        match sym {
            Sym::Call { op, arity } => write!(f, "{}/{arity}", self.op_names[op as usize]),
            Sym::List(arity) => write!(f, "list/{arity}"),
            Sym::Lit(id) => write!(f, "{}", self.lits[id as usize]),
            Sym::Ref(id) => write!(f, "{}", Term::Ref(self.keys[id as usize].clone())),
        }
    }
}

/// Past this many edges a trie node also gets a hash index.
const LINEAR_EDGES: usize = 8;

/// A node of the discrimination net.
#[derive(Clone, Debug, Default)]
struct NetNode {
    /// Edges labelled with a head, in the order rules added them.
    edges: Vec<(Sym, u32)>,
    /// The same edges by label, for nodes with many.
    index: Option<FxHashMap<Sym, u32>>,
    /// The edge taken by a variable, which matches any subterm.
    var: Option<u32>,
    /// The rules whose left-hand side ends here, in the order they were given.
    rules: Vec<u32>,
}

impl NetNode {
    #[inline]
    fn child(&self, sym: Sym) -> Option<u32> {
        match &self.index {
            Some(index) => index.get(&sym).copied(),
            None => self
                .edges
                .iter()
                .find(|(label, _)| *label == sym)
                .map(|&(_, child)| child),
        }
    }
}

const ROOT: u32 = 0;

/// A set of rewrite rules compiled once into a discrimination net (dask's
/// `RuleSet`), for many-to-one matching.
///
/// The net is a trie over the preorder of each left-hand side's heads: a call
/// is labelled with its op *and* its arity, a list with its length, a literal
/// or reference with itself, and every variable with one wildcard edge.
/// Matching a term walks the trie along the term's preorder, trying the exact
/// edge before the wildcard at each step and backtracking, so matches come out
/// most specific first: at the first position where two matching patterns
/// differ, the one with a concrete head wins; patterns of the same shape come
/// out in the order they were given. A match is then checked for repeated
/// variables binding equal subterms.
///
/// # How this differs from dask
///
/// dask's trie labels a call with its function only and a list with `list`,
/// and its preorder does not mark where arguments end. So dask:
/// - ignores arity: `f(g(x), y)` matches `f(g(a, 3))` with `x = a, y = 3`;
///   here it does not match.
/// - crashes on a term shorter than a pattern (`add(1)` against `add(x, y)`
///   raises `IndexError`); here it simply does not match.
/// - lets a literal list match a call to `list` and the other way round
///   (`sum([c, b, a])` matches `sum(list(1, 2, 3))`); here a list pattern
///   matches only a list and a call pattern only a call.
/// - compares literals with Python's `==`, so `1`, `1.0` and `True` match one
///   another; here a literal matches only a literal of the same kind and value
///   (`Int(1)` is not `Float(1.0)`), and a NaN matches nothing.
///
/// The rule set is immutable: where dask has `RuleSet.add`, build a new set.
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_rewrite::{Pattern, RewriteRule, RuleSet, RewriteStrategy};
///
/// let (x, y) = (|| Pattern::var("x"), || Pattern::var("y"));
/// let rules = RuleSet::new([
///     // add(x, 0) -> x
///     RewriteRule::new(Pattern::call("add", [x(), Pattern::lit(0)]), x())?,
///     // f(g(x), y) -> h(x, y)
///     RewriteRule::new(
///         Pattern::call("f", [Pattern::call("g", [x()]), y()]),
///         Pattern::call("h", [x(), y()]),
///     )?,
/// ]);
/// let term = Term::call("add", [Term::lit(2), Term::lit(0)]);
/// assert_eq!(rules.rewrite(&term, RewriteStrategy::BottomUp), Term::lit(2));
/// let term = Term::call("f", [Term::call("g", [Term::key("a")]), Term::lit(3)]);
/// assert_eq!(rules.rewrite(&term, RewriteStrategy::BottomUp).to_string(), "h(a, 3)");
/// # Ok::<(), graph_rewrite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RuleSet {
    rules: Vec<RewriteRule>,
    symbols: Symbols,
    nodes: Vec<NetNode>,
}

/// One match of a rule against a term: which rule, and what its variables
/// bound.
#[derive(Clone, Debug, PartialEq)]
pub struct Match<'a> {
    /// The rule's position in the rule set.
    pub rule: usize,
    /// What each variable of its left-hand side matched.
    pub bindings: Bindings<'a>,
}

impl RuleSet {
    /// Compiles `rules` into a discrimination net (dask's `RuleSet(*rules)`).
    ///
    /// Unlike dask's, the net labels calls with their arity and lists with
    /// their length, and a set cannot grow afterwards (dask's `add`).
    ///
    /// # Arguments
    ///
    /// - `rules`: the rules, most preferred first among patterns of the same
    ///   shape.
    ///
    /// # Returns
    ///
    /// The compiled set.
    ///
    /// # Errors
    ///
    /// None: each [`RewriteRule`] was checked when it was made.
    ///
    /// # Complexity
    ///
    /// O(total size of the left-hand sides) time and space.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_rewrite::{Pattern, RewriteRule, RuleSet};
    ///
    /// let x = || Pattern::var("x");
    /// let rules = RuleSet::new([
    ///     RewriteRule::new(Pattern::call("inc", [x()]), Pattern::call("add", [x(), Pattern::lit(1)]))?,
    ///     RewriteRule::new(Pattern::call("inc", [Pattern::lit(0)]), Pattern::lit(1))?,
    /// ]);
    /// // Exact edges are listed, and tried, before the variable's.
    /// assert_eq!(rules.display_net().to_string(), "inc/1\n  0 => [1]\n  ? => [0]\n");
    /// # Ok::<(), graph_rewrite::Error>(())
    /// ```
    pub fn new(rules: impl IntoIterator<Item = RewriteRule>) -> RuleSet {
        let mut set = RuleSet {
            rules: Vec::new(),
            symbols: Symbols::default(),
            nodes: vec![NetNode::default()],
        };
        for rule in rules {
            set.insert(rule);
        }
        for node in &mut set.nodes {
            if node.edges.len() > LINEAR_EDGES {
                node.index = Some(node.edges.iter().copied().collect());
            }
        }
        set
    }

    /// Compiles template rules given as `(lhs, rhs)` pairs.
    ///
    /// # Errors
    ///
    /// [`Error::InRule`] around [`Error::UnboundVariable`] for the first rule
    /// whose right-hand side uses a variable that its left-hand side lacks.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_rewrite::{Pattern, RuleSet};
    ///
    /// let x = || Pattern::var("x");
    /// let err = RuleSet::from_pairs([
    ///     (Pattern::call("inc", [x()]), Pattern::call("add", [x(), Pattern::lit(1)])),
    ///     (Pattern::call("neg", [x()]), Pattern::call("sub", [Pattern::lit(0), Pattern::var("y")])),
    /// ])
    /// .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "rules[1]: variable `y` appears in the right-hand side but not in the left-hand side `neg(?x)`"
    /// );
    /// ```
    pub fn from_pairs(
        pairs: impl IntoIterator<Item = (Pattern, Pattern)>,
    ) -> Result<RuleSet, Error> {
        let rules = pairs
            .into_iter()
            .enumerate()
            .map(|(index, (lhs, rhs))| {
                RewriteRule::new(lhs, rhs).map_err(|error| Error::InRule {
                    index,
                    error: Box::new(error),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RuleSet::new(rules))
    }

    fn insert(&mut self, rule: RewriteRule) {
        let mut node = ROOT;
        let mut stack = vec![rule.lhs()];
        while let Some(pattern) = stack.pop() {
            node = match self.symbols.intern_pattern(pattern) {
                None => match self.nodes[node as usize].var {
                    Some(child) => child,
                    None => {
                        let child = self.push_node();
                        self.nodes[node as usize].var = Some(child);
                        child
                    }
                },
                Some(sym) => match self.nodes[node as usize].child(sym) {
                    Some(child) => child,
                    None => {
                        let child = self.push_node();
                        self.nodes[node as usize].edges.push((sym, child));
                        child
                    }
                },
            };
            if let Pattern::Call { args: items, .. } | Pattern::List(items) = pattern {
                stack.extend(items.iter().rev());
            }
        }
        self.nodes[node as usize]
            .rules
            .push(self.rules.len() as u32);
        self.rules.push(rule);
    }

    fn push_node(&mut self) -> u32 {
        self.nodes.push(NetNode::default());
        (self.nodes.len() - 1) as u32
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[RewriteRule] {
        &self.rules
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether the set has no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Every match of a rule against the whole of `term` (not its subterms),
    /// most specific first (dask's `RuleSet.iter_matches`).
    ///
    /// Differs from dask where the [`RuleSet`] docs say (arity, lists,
    /// literal kinds), and returns a vector rather than a generator.
    ///
    /// # Arguments
    ///
    /// - `term`: the term to match.
    ///
    /// # Returns
    ///
    /// The matches: the rule's index and its bindings. Matches whose repeated
    /// variables bind unequal subterms are left out; a function right-hand
    /// side is not called, so matches it would decline are included.
    ///
    /// # Errors
    ///
    /// None.
    ///
    /// # Complexity
    ///
    /// Time proportional to the part of the net the term's preorder reaches:
    /// at most the term's size times the number of distinct pattern prefixes
    /// that match it, and independent of rules with other heads. Space
    /// O(size of the longest pattern) besides the result.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::Term;
    /// use graph_rewrite::{Pattern, RewriteRule, RuleSet};
    ///
    /// let a = || Pattern::var("a");
    /// let rules = RuleSet::new([
    ///     RewriteRule::new(Pattern::call("add", [a(), a()]), Pattern::call("double", [a()]))?,
    ///     RewriteRule::new(Pattern::call("add", [a(), Pattern::lit(1)]), Pattern::call("inc", [a()]))?,
    /// ]);
    /// let term = Term::call("add", [Term::lit(1), Term::lit(1)]);
    /// let found: Vec<String> = rules
    ///     .matches(&term)
    ///     .iter()
    ///     .map(|m| format!("{} {}", m.rule, m.bindings))
    ///     .collect();
    /// // The more specific `add(a, 1)` comes first, though it was given second.
    /// assert_eq!(found, ["1 {a: 1}", "0 {a: 1}"]);
    /// # Ok::<(), graph_rewrite::Error>(())
    /// ```
    pub fn matches<'a>(&'a self, term: &'a Term) -> Vec<Match<'a>> {
        let mut out = Vec::new();
        let mut matcher = Matcher::default();
        self.search(term, &mut matcher, |rule, slots| {
            out.push(Match {
                rule: rule as usize,
                bindings: self.rules[rule as usize]
                    .slot_names()
                    .iter()
                    .map(|name| &**name)
                    .zip(slots.iter().copied())
                    .collect(),
            });
            ControlFlow::<()>::Continue(())
        });
        out
    }

    /// The discrimination net as indented text, one edge per line: `add/2`
    /// for a call with two arguments, `list/3` for a list of three, `?` for
    /// the variable edge, and `=> [rules]` where left-hand sides end. For
    /// tests and for understanding why a rule did or did not match.
    pub fn display_net(&self) -> impl fmt::Display + '_ {
        NetDisplay(self)
    }

    /// Whether the term's head could start any match: a cheap test that skips
    /// most subterms before any matching state is set up.
    ///
    /// Returns `None` if no match can start at `term`, else the root's exact
    /// child for the term's head, if any, so the walk need not look it up
    /// again.
    #[inline]
    fn may_match(&self, term: &Term) -> Option<Option<u32>> {
        let root = &self.nodes[ROOT as usize];
        let exact = if root.edges.is_empty() {
            None
        } else {
            self.symbols.of_term(term).and_then(|sym| root.child(sym))
        };
        (exact.is_some() || root.var.is_some()).then_some(exact)
    }

    /// Walks `term` through the net, calling `visit` with each rule that
    /// matches (most specific first) and the terms its slots bound, until
    /// `visit` breaks.
    pub(crate) fn search<'t, R>(
        &self,
        term: &'t Term,
        matcher: &mut Matcher,
        mut visit: impl FnMut(u32, &[&'t Term]) -> ControlFlow<R>,
    ) -> Option<R> {
        let root_exact = self.may_match(term)?;
        let mut state: State<'t> = matcher.take();
        let found = self.walk(term, root_exact, &mut state, &mut visit);
        matcher.put(state);
        found
    }

    /// The depth-first walk of [`RuleSet::search`], with an explicit stack of
    /// choice points so that a pattern of any size cannot exhaust the call
    /// stack.
    fn walk<'t, R>(
        &self,
        term: &'t Term,
        root_exact: Option<u32>,
        state: &mut State<'t>,
        visit: &mut impl FnMut(u32, &[&'t Term]) -> ControlFlow<R>,
    ) -> Option<R> {
        let State {
            pending,
            bound,
            frames,
            slots,
        } = state;
        pending.push(term);
        let mut node = ROOT;
        'descend: loop {
            match pending.pop() {
                Some(next) => frames.push(Frame {
                    node,
                    term: next,
                    pending_len: pending.len() as u32,
                    bound_len: bound.len() as u32,
                    stage: Stage::Exact,
                }),
                None => {
                    // The term is used up: every rule ending here matches,
                    // if its repeated variables agree.
                    for &rule_idx in &self.nodes[node as usize].rules {
                        let rule = &self.rules[rule_idx as usize];
                        if bind_slots(rule, bound, slots)
                            && let ControlFlow::Break(found) = visit(rule_idx, slots)
                        {
                            return Some(found);
                        }
                    }
                }
            }
            // Take the next untried choice, backtracking as needed.
            loop {
                let is_root = frames.len() == 1;
                let frame = frames.last_mut()?;
                pending.truncate(frame.pending_len as usize);
                bound.truncate(frame.bound_len as usize);
                let net_node = &self.nodes[frame.node as usize];
                match frame.stage {
                    Stage::Exact => {
                        frame.stage = Stage::Var;
                        let child = if is_root {
                            // The root frame: `search` looked its child up.
                            root_exact
                        } else if net_node.edges.is_empty() {
                            None
                        } else {
                            self.symbols
                                .of_term(frame.term)
                                .and_then(|sym| net_node.child(sym))
                        };
                        if let Some(child) = child {
                            if let Term::Call { args: items, .. } | Term::List(items) = frame.term {
                                pending.extend(items.iter().rev());
                            }
                            node = child;
                            continue 'descend;
                        }
                    }
                    Stage::Var => {
                        frame.stage = Stage::Done;
                        if let Some(child) = net_node.var {
                            bound.push(frame.term);
                            node = child;
                            continue 'descend;
                        }
                    }
                    Stage::Done => {
                        let term = frame.term;
                        frames.pop();
                        pending.push(term);
                    }
                }
            }
        }
    }

    /// The first applicable rewrite of the whole of `term`: the most specific
    /// match whose right-hand side applies (dask's `RuleSet._rewrite`).
    pub(crate) fn rewrite_once(&self, term: &Term, matcher: &mut Matcher) -> Option<Term> {
        self.search(term, matcher, |rule, slots| {
            match self.rules[rule as usize].apply_slots(slots) {
                Some(result) => ControlFlow::Break(result),
                None => ControlFlow::Continue(()),
            }
        })
    }
}

/// Fills `slots` from the variable occurrences `bound` (in preorder) for
/// `rule`; false if a repeated variable bound unequal subterms.
fn bind_slots<'t>(rule: &RewriteRule, bound: &[&'t Term], slots: &mut Vec<&'t Term>) -> bool {
    slots.clear();
    for (&slot, &term) in rule.occurrence_slots().iter().zip(bound) {
        let slot = slot as usize;
        if slot < slots.len() {
            if slots[slot] != term {
                return false;
            }
        } else {
            slots.push(term);
        }
    }
    true
}

#[derive(Clone, Copy, Debug)]
enum Stage {
    Exact,
    Var,
    Done,
}

/// A choice point of the walk: at net node `node`, the subterm `term` was
/// taken off the pending stack, leaving `pending_len` there and `bound_len`
/// bound variables; `stage` says which edge to try next.
#[derive(Clone, Copy, Debug)]
struct Frame<'t> {
    node: u32,
    term: &'t Term,
    pending_len: u32,
    bound_len: u32,
    stage: Stage,
}

/// The walk's stacks, borrowed from the term being matched.
#[derive(Debug, Default)]
struct State<'t> {
    pending: Vec<&'t Term>,
    bound: Vec<&'t Term>,
    frames: Vec<Frame<'t>>,
    slots: Vec<&'t Term>,
}

/// Reusable buffers for matching, so that matching a million subterms does
/// not allocate a million times. Between walks the buffers are empty, and
/// [`recycle`] lends them out at the lifetime of the next term.
#[derive(Debug, Default)]
pub(crate) struct Matcher {
    idle: State<'static>,
}

impl Matcher {
    fn take<'t>(&mut self) -> State<'t> {
        let idle = std::mem::take(&mut self.idle);
        State {
            pending: recycle(idle.pending),
            bound: recycle(idle.bound),
            frames: recycle(idle.frames),
            slots: recycle(idle.slots),
        }
    }

    fn put(&mut self, state: State<'_>) {
        self.idle = State {
            pending: recycle(state.pending),
            bound: recycle(state.bound),
            frames: recycle(state.frames),
            slots: recycle(state.slots),
        };
    }
}

/// An emptied vector, retyped; the standard library reuses the allocation when
/// the two element types have the same layout, as they do here (they differ
/// only in a lifetime).
fn recycle<T, U>(mut items: Vec<T>) -> Vec<U> {
    items.clear();
    items
        .into_iter()
        .map(|_| unreachable!("the vector is empty"))
        .collect()
}

struct NetDisplay<'a>(&'a RuleSet);

impl fmt::Display for NetDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.0;
        let write_rules = |f: &mut fmt::Formatter<'_>, node: &NetNode| {
            if node.rules.is_empty() {
                writeln!(f)
            } else {
                writeln!(f, " => {:?}", node.rules)
            }
        };
        // (node, depth, label) in preorder; None labels the variable edge.
        let mut stack: Vec<(u32, usize, Option<Sym>)> = Vec::new();
        let push_children = |stack: &mut Vec<(u32, usize, Option<Sym>)>, node: &NetNode, depth| {
            if let Some(var) = node.var {
                stack.push((var, depth, None));
            }
            for &(sym, child) in node.edges.iter().rev() {
                stack.push((child, depth, Some(sym)));
            }
        };
        push_children(&mut stack, &set.nodes[ROOT as usize], 0);
        while let Some((node_idx, depth, label)) = stack.pop() {
            let node = &set.nodes[node_idx as usize];
            write!(f, "{:width$}", "", width = 2 * depth)?;
            match label {
                Some(sym) => set.symbols.write_sym(f, sym)?,
                None => f.write_str("?")?,
            }
            write_rules(f, node)?;
            push_children(&mut stack, node, depth + 1);
        }
        Ok(())
    }
}
