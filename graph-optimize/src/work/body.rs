//! Bodies in the work state: `Slot`, `Expr` and `Kind`, substituting
//! bodies into references without copying terms, and what passes measure
//! of a body (its shape, top op, ops, size and nesting).

use graph_core::{Body, NodeId, Op, Term, Value};

use super::Work;

/// A body, or a part of one, in the work state.
///
/// Every pass only ever replaces references: by another task's body (inline,
/// fuse) or by a reference to another task (renaming, dropping aliases). So a
/// body is always a source body whose references have been replaced, and a
/// replacement is itself such a body: sharing these is what keeps passes
/// from copying terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A reference to the result of a node (an alias, as a whole body).
    Ref(NodeId),
    /// The body of an input task, with its own references.
    Src(NodeId),
    /// An expression of the arena, by its index there.
    Expr(u32),
}

/// A source body with its references replaced by slots.
#[derive(Clone, Copy, Debug)]
pub(super) struct Expr {
    /// The input task whose body gives the shape.
    pub(super) base: NodeId,
    /// Its slots are `slots[start..start + n]`, one per reference of the
    /// base body, in preorder (`n` is the base's reference count).
    pub(super) start: u32,
    /// How many references the expression holds once expanded.
    pub(super) n_refs: u32,
}

/// The outermost shape of a body, which most passes decide on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An opaque task.
    Opaque,
    /// A bare reference: an alias.
    Ref,
    /// The literal `None`.
    Null,
    /// Any other literal.
    Lit,
    /// A call.
    Call,
    /// A list.
    List,
}

impl Kind {
    /// The shape of a source body.
    pub(crate) fn of(body: &Body) -> Kind {
        match body {
            Body::Opaque(_) => Kind::Opaque,
            Body::Term(Term::Ref(_)) => Kind::Ref,
            Body::Term(Term::Lit(Value::Null)) => Kind::Null,
            Body::Term(Term::Lit(_)) => Kind::Lit,
            Body::Term(Term::Call { .. }) => Kind::Call,
            Body::Term(Term::List(_)) => Kind::List,
        }
    }
}

impl Work<'_> {
    /// A node's body.
    pub(crate) fn body(&self, node: NodeId) -> Slot {
        self.body[node.index()]
    }

    /// The outermost shape of a body.
    pub(crate) fn kind_of(&self, mut slot: Slot) -> Kind {
        loop {
            let expr = match slot {
                Slot::Ref(_) => return Kind::Ref,
                Slot::Src(m) => return self.kinds[m.index()],
                Slot::Expr(e) => self.exprs[e as usize],
            };
            match self.kinds[expr.base.index()] {
                // A source alias whose reference was replaced is what replaced it.
                Kind::Ref => slot = self.slots[expr.start as usize],
                kind => return kind,
            }
        }
    }

    /// The outermost shape of a node's body.
    pub(crate) fn kind(&self, node: NodeId) -> Kind {
        self.kind_of(self.body(node))
    }

    /// Whether a node's body is a term (not opaque).
    pub(crate) fn is_term(&self, node: NodeId) -> bool {
        self.kind(node) != Kind::Opaque
    }

    /// The op of a node whose body is a call.
    pub(crate) fn top_op(&self, node: NodeId) -> Option<&Op> {
        let mut slot = self.body(node);
        let base = loop {
            match slot {
                Slot::Ref(_) => return None,
                Slot::Src(m) => break m,
                Slot::Expr(e) => {
                    let expr = self.exprs[e as usize];
                    if self.kinds[expr.base.index()] == Kind::Ref {
                        slot = self.slots[expr.start as usize];
                    } else {
                        break expr.base;
                    }
                }
            }
        };
        match self.src_body(base) {
            Body::Term(Term::Call { op, .. }) => Some(op),
            _ => None,
        }
    }

    /// The slots of an expression.
    pub(super) fn expr_slots(&self, e: u32) -> &[Slot] {
        let expr = self.exprs[e as usize];
        let n = self.src_ref_count(expr.base) as usize;
        &self.slots[expr.start as usize..expr.start as usize + n]
    }

    /// How many references a body holds once expanded.
    fn n_refs(&self, slot: Slot) -> u32 {
        match slot {
            Slot::Ref(_) => 1,
            Slot::Src(m) => self.src_ref_count(m),
            Slot::Expr(e) => self.exprs[e as usize].n_refs,
        }
    }

    /// Calls `f` on every op called anywhere in a body, expanded; stops at
    /// the first `false`, which it returns.
    pub(crate) fn all_ops(&self, slot: Slot, f: &mut impl FnMut(&Op) -> bool) -> bool {
        let (base, slots) = match slot {
            Slot::Ref(_) => return true,
            Slot::Src(m) => (m, &[][..]),
            Slot::Expr(e) => (self.exprs[e as usize].base, self.expr_slots(e)),
        };
        match self.src_body(base) {
            Body::Term(term) => self.term_ops(term, slots, &mut 0, f),
            Body::Opaque(_) => true,
        }
    }

    /// [`Work::all_ops`] over a source term whose references are replaced
    /// by `slots`, if any, from `slots[*pos]` on.
    fn term_ops(
        &self,
        term: &Term,
        slots: &[Slot],
        pos: &mut usize,
        f: &mut impl FnMut(&Op) -> bool,
    ) -> bool {
        match term {
            Term::Lit(_) => true,
            Term::Ref(_) => {
                *pos += 1;
                slots
                    .get(*pos - 1)
                    .is_none_or(|&slot| self.all_ops(slot, f))
            }
            Term::Call { op, args } => {
                f(op) && args.iter().all(|arg| self.term_ops(arg, slots, pos, f))
            }
            Term::List(items) => items.iter().all(|item| self.term_ops(item, slots, pos, f)),
        }
    }

    /// The number of term nodes of a body, expanded, saturating; `memo`
    /// caches expressions' sizes (0 for unknown).
    pub(crate) fn size_of(&self, slot: Slot, memo: &mut Vec<usize>) -> usize {
        match slot {
            Slot::Ref(_) => 1,
            Slot::Src(m) => match self.src_body(m) {
                Body::Term(term) => term.size(),
                Body::Opaque(_) => 1,
            },
            Slot::Expr(e) => {
                let i = e as usize;
                if memo.len() <= i {
                    memo.resize(self.exprs.len(), 0);
                }
                if memo[i] != 0 {
                    return memo[i];
                }
                let base = self.exprs[i].base;
                let mut size = self.size_of(Slot::Src(base), memo);
                for &slot in self.expr_slots(e) {
                    // Each slot replaces one reference (one node).
                    size = size.saturating_add(self.size_of(slot, memo)) - 1;
                }
                memo[i] = size.max(1);
                size
            }
        }
    }

    /// How many calls and lists a body nests once expanded ([`Term::nesting`]);
    /// an upper bound where an expression's references sit at different
    /// depths, exact for chains. `memo` caches expressions' figures.
    pub(crate) fn nesting_of(&self, slot: Slot, memo: &mut Vec<u32>) -> usize {
        match slot {
            Slot::Ref(_) => 0,
            Slot::Src(m) => self.src_nesting(m) as usize,
            Slot::Expr(e) => {
                let i = e as usize;
                if memo.len() <= i {
                    memo.resize(self.exprs.len(), u32::MAX);
                }
                if memo[i] != u32::MAX {
                    return memo[i] as usize;
                }
                let base = self.nesting_of(Slot::Src(self.exprs[i].base), memo);
                let mut deepest = 0;
                for &slot in self.expr_slots(e) {
                    deepest = deepest.max(self.nesting_of(slot, memo));
                }
                let nesting = base.saturating_add(deepest);
                memo[i] = u32::try_from(nesting).unwrap_or(u32::MAX - 1);
                nesting
            }
        }
    }

    /// How many levels a task counts toward a `max_depth` limit: its body's
    /// nesting, and at least one (so that on tasks of one call each, the
    /// limit counts tasks).
    pub(crate) fn levels(&self, node: NodeId, memo: &mut Vec<u32>) -> usize {
        self.nesting_of(self.body(node), memo).max(1)
    }

    /// A copy of `body` with the references at the positions (in preorder)
    /// where `pick` gives a slot replaced by it; `row` is `body`'s row. Parts
    /// without replacements are shared, not copied. `pick(position, dep)`
    /// must answer the same each time it is asked.
    pub(crate) fn substitute(
        &mut self,
        body: Slot,
        row: &[NodeId],
        pick: &mut impl FnMut(usize, NodeId) -> Option<Slot>,
    ) -> Slot {
        let mut pos = 0;
        self.subst(body, row, &mut pos, pick)
    }

    fn subst(
        &mut self,
        slot: Slot,
        row: &[NodeId],
        pos: &mut usize,
        pick: &mut impl FnMut(usize, NodeId) -> Option<Slot>,
    ) -> Slot {
        match slot {
            Slot::Ref(dep) => {
                debug_assert_eq!(row[*pos], dep);
                *pos += 1;
                pick(*pos - 1, dep).unwrap_or(slot)
            }
            Slot::Src(m) => {
                let n = self.src_ref_count(m) as usize;
                if n == 0 {
                    return slot;
                }
                let at = *pos;
                *pos += n;
                let mut changed: Option<usize> = None;
                for (i, &dep) in row[at..at + n].iter().enumerate() {
                    if let Some(new) = pick(at + i, dep) {
                        let start = *changed.get_or_insert_with(|| {
                            let start = self.slots.len();
                            self.slots
                                .extend(row[at..at + n].iter().map(|&d| Slot::Ref(d)));
                            start
                        });
                        self.slots[start + i] = new;
                    }
                }
                match changed {
                    None => slot,
                    Some(start) => self.push_expr(m, start),
                }
            }
            Slot::Expr(e) => {
                let expr = self.exprs[e as usize];
                let n_refs = expr.n_refs as usize;
                let at = *pos;
                if !(at..at + n_refs).any(|i| pick(i, row[i]).is_some()) {
                    // Nothing to replace in this part: share it.
                    *pos += n_refs;
                    return slot;
                }
                let n = self.src_ref_count(expr.base) as usize;
                let start = self.slots.len();
                self.slots
                    .extend_from_within(expr.start as usize..expr.start as usize + n);
                for i in 0..n {
                    let child = self.slots[start + i];
                    let new = self.subst(child, row, pos, pick);
                    self.slots[start + i] = new;
                }
                self.push_expr(expr.base, start)
            }
        }
    }

    /// Adds an expression over source body `base` whose slots start at
    /// `start` (already in the arena).
    fn push_expr(&mut self, base: NodeId, start: usize) -> Slot {
        let n = self.src_ref_count(base) as usize;
        let n_refs = self.slots[start..start + n]
            .iter()
            .map(|&slot| self.n_refs(slot))
            .sum();
        let e = self.exprs.len() as u32;
        self.exprs.push(Expr {
            base,
            start: start as u32,
            n_refs,
        });
        Slot::Expr(e)
    }
}
