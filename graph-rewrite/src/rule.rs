//! `RewriteRule`: a pattern to search for and what to put in its place, and
//! `Bindings`, what a match binds each variable to.

use std::fmt;
use std::sync::Arc;

use graph_core::{Op, Term};

use crate::{Error, Pattern};

/// The signature of a computed right-hand side: the bindings of a match in,
/// the replacement out, or `None` when the rule should not apply after all
/// (a guard).
pub type RhsFn = dyn Fn(&Bindings<'_>) -> Option<Term> + Send + Sync;

/// The right-hand side of a rule: what replaces a match (egg's applier).
#[derive(Clone)]
pub enum Rhs {
    /// A template: the pattern with each variable replaced by what it matched.
    Template(Pattern),
    /// A function of the bindings, dask's callable `rhs`.
    Fn(Arc<RhsFn>),
}

impl fmt::Debug for Rhs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rhs::Template(pattern) => write!(f, "Template({pattern})"),
            Rhs::Fn(_) => f.write_str("Fn(..)"),
        }
    }
}

/// What each variable of a rule's left-hand side matched, by name.
///
/// Made by matching ([`RuleSet::matches`](crate::RuleSet::matches)), or by
/// hand to call [`RewriteRule::apply`] directly (dask's `rule.subs(dict)`).
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_rewrite::Bindings;
///
/// let one = Term::lit(1);
/// let bindings: Bindings<'_> = [("a", &one)].into_iter().collect();
/// assert_eq!(bindings.get("a"), Some(&one));
/// assert_eq!(bindings.get("b"), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bindings<'a> {
    pairs: Vec<(&'a str, &'a Term)>,
}

impl<'a> Bindings<'a> {
    /// No bindings.
    pub fn new() -> Bindings<'a> {
        Bindings::default()
    }

    /// Binds `name` to `term`, replacing an earlier binding of `name`.
    pub fn insert(&mut self, name: &'a str, term: &'a Term) {
        match self.pairs.iter_mut().find(|(bound, _)| *bound == name) {
            Some(pair) => pair.1 = term,
            None => self.pairs.push((name, term)),
        }
    }

    /// What `name` is bound to.
    pub fn get(&self, name: &str) -> Option<&'a Term> {
        self.pairs
            .iter()
            .find(|(bound, _)| *bound == name)
            .map(|&(_, term)| term)
    }

    /// Every binding, in the order the variables first occur in the pattern.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a Term)> + '_ {
        self.pairs.iter().copied()
    }

    /// The number of variables bound.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no variable is bound.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl<'a> FromIterator<(&'a str, &'a Term)> for Bindings<'a> {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a Term)>>(iter: I) -> Bindings<'a> {
        let mut bindings = Bindings::new();
        for (name, term) in iter {
            bindings.insert(name, term);
        }
        bindings
    }
}

impl fmt::Display for Bindings<'_> {
    /// `{a: 1, b: inc(x)}`, in order of first occurrence.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (name, term)) in self.pairs.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name}: {term}")?;
        }
        f.write_str("}")
    }
}

/// A right-hand-side template compiled against the left-hand side's variable
/// slots, so that applying it looks nothing up by name.
#[derive(Clone, Debug)]
pub(crate) enum Template {
    /// A subtree without variables, cloned whole.
    Ground(Term),
    /// The term bound to this slot.
    Var(u32),
    Call {
        op: Op,
        args: Vec<Template>,
    },
    List(Vec<Template>),
}

impl Template {
    fn compile(pattern: &Pattern, slots: &[Box<str>]) -> Result<Template, Box<str>> {
        if pattern.is_ground()
            && let Some(term) = pattern.to_term()
        {
            return Ok(Template::Ground(term));
        }
        Ok(match pattern {
            Pattern::Var(name) => match slots.iter().position(|slot| slot == name) {
                Some(slot) => Template::Var(slot as u32),
                None => return Err(name.clone()),
            },
            Pattern::Call { op, args } => Template::Call {
                op: op.clone(),
                args: Template::compile_all(args, slots)?,
            },
            Pattern::List(items) => Template::List(Template::compile_all(items, slots)?),
            Pattern::Lit(value) => Template::Ground(Term::Lit(value.clone())),
            Pattern::Ref(key) => Template::Ground(Term::Ref(key.clone())),
        })
    }

    fn compile_all(patterns: &[Pattern], slots: &[Box<str>]) -> Result<Vec<Template>, Box<str>> {
        patterns
            .iter()
            .map(|pattern| Template::compile(pattern, slots))
            .collect()
    }

    pub(crate) fn instantiate(&self, slots: &[&Term]) -> Term {
        match self {
            Template::Ground(term) => term.clone(),
            Template::Var(slot) => slots[*slot as usize].clone(),
            Template::Call { op, args } => Term::Call {
                op: op.clone(),
                args: args.iter().map(|arg| arg.instantiate(slots)).collect(),
            },
            Template::List(items) => {
                Term::List(items.iter().map(|item| item.instantiate(slots)).collect())
            }
        }
    }
}

/// A rewrite rule: `lhs -> rhs` over the variables of `lhs` (dask's
/// `RewriteRule(lhs, rhs, vars)`, egg's searcher plus applier).
///
/// `lhs` is a [`Pattern`]; a variable used twice in it matches only equal
/// subterms. `rhs` is a template [`Pattern`] whose variables are replaced by
/// what they matched, or a function of the [`Bindings`]. The variables are
/// those of `lhs`, so unlike dask there is no `vars` argument to keep in step
/// with the pattern: [`RewriteRule::vars`] is derived, as dask reduces its
/// `vars` to those found in `lhs`.
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_rewrite::{Bindings, Pattern, RewriteRule};
///
/// // add(a, a) -> double(a)
/// let a = || Pattern::var("a");
/// let rule = RewriteRule::new(
///     Pattern::call("add", [a(), a()]),
///     Pattern::call("double", [a()]),
/// )?;
/// assert_eq!(rule.vars(), ["a"]);
/// assert_eq!(rule.lhs().var_occurrences(), ["a", "a"]);
/// let one = Term::lit(1);
/// let bindings: Bindings<'_> = [("a", &one)].into_iter().collect();
/// assert_eq!(rule.apply(&bindings).unwrap().to_string(), "double(1)");
///
/// // A right-hand-side variable that the left-hand side does not bind:
/// let err = RewriteRule::new(Pattern::call("f", [a()]), Pattern::var("b")).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "variable `b` appears in the right-hand side but not in the left-hand side `f(?a)`"
/// );
/// # Ok::<(), graph_rewrite::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RewriteRule {
    lhs: Pattern,
    rhs: Rhs,
    /// The variables of `lhs`, sorted, each once.
    vars: Vec<Box<str>>,
    /// The variables of `lhs` in order of first occurrence in preorder; a
    /// variable's position here is its slot.
    slots: Vec<Box<str>>,
    /// For each variable occurrence of `lhs` in preorder, its slot.
    occurrence_slots: Vec<u32>,
    /// The compiled `rhs`, if it is a template.
    template: Option<Template>,
}

impl RewriteRule {
    /// The rule `lhs -> rhs`, `rhs` a template.
    ///
    /// # Errors
    ///
    /// [`Error::UnboundVariable`] if `rhs` uses a variable that `lhs` lacks.
    pub fn new(lhs: Pattern, rhs: Pattern) -> Result<RewriteRule, Error> {
        let mut rule =
            RewriteRule::with_rhs(lhs, Rhs::Template(Pattern::Lit(graph_core::Value::Null)));
        let template =
            Template::compile(&rhs, &rule.slots).map_err(|var| Error::UnboundVariable {
                var,
                lhs: rule.lhs.to_string(),
            })?;
        rule.template = Some(template);
        rule.rhs = Rhs::Template(rhs);
        Ok(rule)
    }

    /// The rule `lhs -> f(bindings)`. `f` may return `None` to decline a
    /// match, which then counts as no match (the next most specific one is
    /// tried).
    pub fn with_fn(
        lhs: Pattern,
        f: impl Fn(&Bindings<'_>) -> Option<Term> + Send + Sync + 'static,
    ) -> RewriteRule {
        RewriteRule::with_rhs(lhs, Rhs::Fn(Arc::new(f)))
    }

    fn with_rhs(lhs: Pattern, rhs: Rhs) -> RewriteRule {
        let mut slots: Vec<Box<str>> = Vec::new();
        let mut occurrence_slots = Vec::new();
        lhs.for_each_var(&mut |name| {
            let slot = match slots.iter().position(|slot| &**slot == name) {
                Some(slot) => slot,
                None => {
                    slots.push(name.into());
                    slots.len() - 1
                }
            };
            occurrence_slots.push(slot as u32);
        });
        let mut vars = slots.clone();
        vars.sort();
        RewriteRule {
            lhs,
            rhs,
            vars,
            slots,
            occurrence_slots,
            template: None,
        }
    }

    /// The left-hand side.
    pub fn lhs(&self) -> &Pattern {
        &self.lhs
    }

    /// The right-hand side.
    pub fn rhs(&self) -> &Rhs {
        &self.rhs
    }

    /// The variables of the left-hand side, sorted, each once (dask's
    /// `rule.vars`).
    pub fn vars(&self) -> Vec<&str> {
        self.vars.iter().map(|var| &**var).collect()
    }

    /// The replacement for a match with these bindings (dask's `rule.subs`):
    /// the template with its variables replaced, or the function's result.
    ///
    /// Template variables are replaced all at once, so a bound term that
    /// happens to contain another variable's name is left alone (dask
    /// substitutes one variable after another, and would replace it).
    ///
    /// Returns `None` when a template variable is not bound, or when the
    /// function declines.
    pub fn apply(&self, bindings: &Bindings<'_>) -> Option<Term> {
        match &self.rhs {
            Rhs::Template(_) => {
                let template = self.template.as_ref()?;
                let slots: Option<Vec<&Term>> =
                    self.slots.iter().map(|name| bindings.get(name)).collect();
                Some(template.instantiate(&slots?))
            }
            Rhs::Fn(f) => f(bindings),
        }
    }

    /// The replacement for a match that bound `slots` (one term per slot).
    pub(crate) fn apply_slots(&self, slots: &[&Term]) -> Option<Term> {
        match (&self.template, &self.rhs) {
            (Some(template), _) => Some(template.instantiate(slots)),
            (None, Rhs::Fn(f)) => {
                let bindings = Bindings {
                    pairs: self
                        .slots
                        .iter()
                        .map(|name| &**name)
                        .zip(slots.iter().copied())
                        .collect(),
                };
                f(&bindings)
            }
            (None, Rhs::Template(_)) => None,
        }
    }

    /// The variable names by slot.
    pub(crate) fn slot_names(&self) -> &[Box<str>] {
        &self.slots
    }

    /// The slot of each variable occurrence, in preorder.
    pub(crate) fn occurrence_slots(&self) -> &[u32] {
        &self.occurrence_slots
    }
}

impl fmt::Display for RewriteRule {
    /// `lhs -> rhs`, or `lhs -> <fn>` for a computed right-hand side.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rhs {
            Rhs::Template(rhs) => write!(f, "{} -> {rhs}", self.lhs),
            Rhs::Fn(_) => write!(f, "{} -> <fn>", self.lhs),
        }
    }
}
