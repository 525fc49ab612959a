//! Helpers shared by the integration tests: a parser for the text syntax of
//! terms and patterns (`add(?a, 1)`, `[x, 'text', 2.5]`), a naive matcher to
//! check the discrimination net against, and seeded random terms and rules.

#![allow(dead_code, unreachable_pub)]

pub mod dask;

use graph_core::generate::Rng;
use graph_core::{Key, Term, Value};
use graph_rewrite::{Pattern, RewriteRule, RuleSet};

/// Parses the `Display` syntax of terms, plus `?name` for a variable: `f(a,
/// 1)` is a call, a bare name a reference, `'s'` a string, `[..]` a list,
/// `None`/`True`/`False` literals.
pub fn pattern(text: &str) -> Pattern {
    let mut parser = Parser {
        text: text.as_bytes(),
        pos: 0,
    };
    let pattern = parser.pattern();
    parser.space();
    assert_eq!(parser.pos, text.len(), "trailing text in {text:?}");
    pattern
}

/// Parses a term (a pattern without variables).
pub fn term(text: &str) -> Term {
    pattern(text)
        .to_term()
        .unwrap_or_else(|| panic!("{text:?} has variables"))
}

/// The template rule `lhs -> rhs`, both parsed.
pub fn rule(lhs: &str, rhs: &str) -> RewriteRule {
    RewriteRule::new(pattern(lhs), pattern(rhs)).unwrap()
}

/// A rule set of template rules.
pub fn rules(pairs: &[(&str, &str)]) -> RuleSet {
    RuleSet::new(pairs.iter().map(|(lhs, rhs)| rule(lhs, rhs)))
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.pos < self.text.len() && self.text[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.text.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8) {
        assert_eq!(self.peek(), Some(byte), "at {}", self.pos);
        self.pos += 1;
    }

    fn word(&mut self) -> &str {
        let start = self.pos;
        while self.pos < self.text.len()
            && (self.text[self.pos].is_ascii_alphanumeric()
                || b"_.-+".contains(&self.text[self.pos]))
        {
            self.pos += 1;
        }
        std::str::from_utf8(&self.text[start..self.pos]).unwrap()
    }

    fn items(&mut self, close: u8) -> Vec<Pattern> {
        let mut items = Vec::new();
        if self.peek() == Some(close) {
            self.pos += 1;
            return items;
        }
        loop {
            items.push(self.pattern());
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return items;
                }
                other => panic!("unexpected {other:?} at {}", self.pos),
            }
        }
    }

    fn pattern(&mut self) -> Pattern {
        match self.peek().expect("a term") {
            b'?' => {
                self.pos += 1;
                Pattern::var(self.word())
            }
            b'[' => {
                self.pos += 1;
                Pattern::List(self.items(b']'))
            }
            b'\'' => {
                self.pos += 1;
                let start = self.pos;
                while self.text[self.pos] != b'\'' {
                    self.pos += 1;
                }
                let s = std::str::from_utf8(&self.text[start..self.pos]).unwrap();
                self.pos += 1;
                Pattern::lit(s)
            }
            c if c.is_ascii_digit() || c == b'-' => {
                let word = self.word();
                match word.parse::<i64>() {
                    Ok(i) => Pattern::lit(i),
                    Err(_) => Pattern::lit(word.parse::<f64>().unwrap()),
                }
            }
            _ => {
                let name = self.word().to_owned();
                assert!(!name.is_empty(), "unexpected text at {}", self.pos);
                if self.peek() == Some(b'(') {
                    self.pos += 1;
                    return Pattern::call(name.as_str(), self.items(b')'));
                }
                match name.as_str() {
                    "None" => Pattern::Lit(Value::Null),
                    "True" => Pattern::lit(true),
                    "False" => Pattern::lit(false),
                    _ => Pattern::key(name.as_str()),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// A naive matcher: each rule against the term, one at a time.

/// Matches `pattern` against `term`, extending `bound`; false on a mismatch.
pub fn naive_match<'a>(
    pattern: &'a Pattern,
    term: &'a Term,
    bound: &mut Vec<(&'a str, &'a Term)>,
) -> bool {
    match (pattern, term) {
        (Pattern::Var(name), _) => match bound.iter().find(|(n, _)| *n == &**name) {
            Some((_, earlier)) => *earlier == term,
            None => {
                bound.push((name, term));
                true
            }
        },
        (Pattern::Lit(a), Term::Lit(b)) => a == b,
        (Pattern::Ref(a), Term::Ref(b)) => a == b,
        (Pattern::Call { op: p, args: ps }, Term::Call { op: t, args: ts }) => {
            p == t
                && ps.len() == ts.len()
                && ps.iter().zip(ts).all(|(p, t)| naive_match(p, t, bound))
        }
        (Pattern::List(ps), Term::List(ts)) => {
            ps.len() == ts.len() && ps.iter().zip(ts).all(|(p, t)| naive_match(p, t, bound))
        }
        _ => false,
    }
}

/// The preorder of a pattern as specificity flags: 0 for a concrete head, 1
/// for a variable. Among patterns matching one term, the smaller sequence
/// is the more specific.
fn specificity(pattern: &Pattern, out: &mut Vec<u8>) {
    match pattern {
        Pattern::Var(_) => out.push(1),
        Pattern::Lit(_) | Pattern::Ref(_) => out.push(0),
        Pattern::Call { args: items, .. } | Pattern::List(items) => {
            out.push(0);
            for item in items {
                specificity(item, out);
            }
        }
    }
}

/// The indices of the rules matching the whole of `term`, most specific
/// first, then in the order given.
pub fn naive_matches(rules: &RuleSet, term: &Term) -> Vec<usize> {
    let mut found: Vec<(Vec<u8>, usize)> = rules
        .rules()
        .iter()
        .enumerate()
        .filter(|(_, rule)| naive_match(rule.lhs(), term, &mut Vec::new()))
        .map(|(index, rule)| {
            let mut flags = Vec::new();
            specificity(rule.lhs(), &mut flags);
            (flags, index)
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, index)| index).collect()
}

/// Whether any rule matches `term` or a subterm, by the naive matcher.
pub fn naive_matches_anywhere(rules: &RuleSet, term: &Term) -> bool {
    !naive_matches(rules, term).is_empty()
        || graph_rewrite::args(term)
            .iter()
            .any(|t| naive_matches_anywhere(rules, t))
}

/// dask's bottom-up strategy written plainly over the naive matcher: children
/// first, then the most specific match of the node, once.
pub fn naive_bottom_up(rules: &RuleSet, term: &Term) -> Term {
    let term = match term {
        Term::Call { op, args } => Term::Call {
            op: op.clone(),
            args: args.iter().map(|t| naive_bottom_up(rules, t)).collect(),
        },
        Term::List(items) => Term::List(items.iter().map(|t| naive_bottom_up(rules, t)).collect()),
        leaf => leaf.clone(),
    };
    for index in naive_matches(rules, &term) {
        let rule = &rules.rules()[index];
        let mut bound = Vec::new();
        assert!(naive_match(rule.lhs(), &term, &mut bound));
        let bindings = bound.into_iter().collect();
        if let Some(result) = rule.apply(&bindings) {
            return result;
        }
    }
    term
}

// ---------------------------------------------------------------------------
// Seeded random terms and rules over a small alphabet, so that matches are
// frequent.

const OPS: [&str; 3] = ["f", "g", "h"];

/// A random term of depth at most `depth`.
pub fn random_term(rng: &mut Rng, depth: usize) -> Term {
    let leaf = depth == 0 || rng.below(3) == 0;
    if leaf {
        return match rng.below(4) {
            0 => Term::lit(rng.below(2) as i64),
            1 => Term::lit("s"),
            _ => Term::Ref(Key::from(["a", "b"][rng.below(2)])),
        };
    }
    let arity = rng.below(3);
    let children: Vec<Term> = (0..arity).map(|_| random_term(rng, depth - 1)).collect();
    if rng.below(5) == 0 {
        Term::List(children)
    } else {
        Term::call(OPS[rng.below(OPS.len())], children)
    }
}

/// A random pattern of depth at most `depth` over variables `x` and `y`.
pub fn random_pattern(rng: &mut Rng, depth: usize) -> Pattern {
    if depth == 0 || rng.below(3) == 0 {
        return match rng.below(5) {
            0 | 1 => Pattern::var(["x", "y"][rng.below(2)]),
            2 => Pattern::lit(rng.below(2) as i64),
            3 => Pattern::lit("s"),
            _ => Pattern::key(["a", "b"][rng.below(2)]),
        };
    }
    let arity = rng.below(3);
    let children: Vec<Pattern> = (0..arity).map(|_| random_pattern(rng, depth - 1)).collect();
    if rng.below(5) == 0 {
        Pattern::List(children)
    } else {
        Pattern::call(OPS[rng.below(OPS.len())], children)
    }
}

/// A random right-hand side using only the variables in `vars`.
pub fn random_rhs(rng: &mut Rng, vars: &[&str], depth: usize) -> Pattern {
    if depth == 0 || rng.below(2) == 0 {
        return if !vars.is_empty() && rng.below(2) == 0 {
            Pattern::var(vars[rng.below(vars.len())])
        } else {
            Pattern::lit(rng.below(3) as i64)
        };
    }
    let arity = 1 + rng.below(2);
    Pattern::call(
        ["k", "m"][rng.below(2)],
        (0..arity).map(|_| random_rhs(rng, vars, depth - 1)),
    )
}

/// A random rule: a random left-hand side (not a bare variable) and a
/// right-hand side over its variables.
pub fn random_rule(rng: &mut Rng) -> RewriteRule {
    let lhs = loop {
        let lhs = random_pattern(rng, 3);
        if !matches!(lhs, Pattern::Var(_)) {
            break lhs;
        }
    };
    let vars: Vec<String> = lhs
        .var_occurrences()
        .iter()
        .map(|v| v.to_string())
        .collect();
    let vars: Vec<&str> = vars.iter().map(String::as_str).collect();
    let rhs = random_rhs(rng, &vars, 2);
    RewriteRule::new(lhs, rhs).unwrap()
}

/// A random rule set of `n` rules.
pub fn random_rules(rng: &mut Rng, n: usize) -> RuleSet {
    RuleSet::new((0..n).map(|_| random_rule(rng)))
}
