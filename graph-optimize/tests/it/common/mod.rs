//! Helpers shared by the integration tests: a tiny parser for graphs written
//! as `key = term` lines, a printer that sorts those lines, a check that a
//! pass's output is a valid graph, and a small evaluator to compare
//! results before and after a pass.
#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use graph_core::{Body, Key, TaskGraph, Term, Value};

/// Parses a graph, one `key = term` per line. Keys are bare names
/// (`b1-b2-c`) or tuples (`('x', 0)`); in terms, a bare name or a tuple is a
/// reference, `'text'` a string, `1` / `1.5` numbers, `None` / `True` /
/// `False` literals, `op(args)` a call and `[items]` a list.
pub fn graph(text: &str) -> TaskGraph {
    let mut graph = TaskGraph::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (key, term) = line
            .split_once(" = ")
            .unwrap_or_else(|| panic!("no ' = ' in {line:?}"));
        let key = Parser::new(key.trim()).key_all();
        let term = Parser::new(term.trim()).term_all();
        graph.insert(key, term).expect("distinct keys");
    }
    graph
}

/// Parses a single term.
pub fn term(text: &str) -> Term {
    Parser::new(text).term_all()
}

/// Parses a single key.
pub fn key(text: &str) -> Key {
    Parser::new(text).key_all()
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser { text, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        while self.rest().starts_with(' ') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) {
        assert!(self.eat(s), "expected {s:?} at {:?}", self.rest());
    }

    fn name(&mut self) -> &'a str {
        self.skip_ws();
        let len = self
            .rest()
            .find(|c: char| !is_name_char(c))
            .unwrap_or(self.rest().len());
        let name = &self.rest()[..len];
        self.pos += len;
        name
    }

    fn string(&mut self) -> String {
        self.expect("'");
        let end = self.rest().find('\'').expect("closing quote");
        let s = self.rest()[..end].to_owned();
        self.pos += end + 1;
        s
    }

    fn key_all(mut self) -> Key {
        let key = self.key();
        self.skip_ws();
        assert!(self.rest().is_empty(), "trailing {:?}", self.rest());
        key
    }

    fn term_all(mut self) -> Term {
        let term = self.term();
        self.skip_ws();
        assert!(self.rest().is_empty(), "trailing {:?}", self.rest());
        term
    }

    /// A key: a name, a quoted string, a number, or a tuple of keys.
    fn key(&mut self) -> Key {
        self.skip_ws();
        if self.eat("(") {
            let mut parts = Vec::new();
            while !self.eat(")") {
                parts.push(self.key());
                self.eat(",");
            }
            return Key::tuple(parts);
        }
        if self.rest().starts_with('\'') {
            return Key::from(self.string());
        }
        let name = self.name();
        if let Ok(i) = name.parse::<i64>() {
            return Key::from(i);
        }
        if name.starts_with(|c: char| c.is_ascii_digit())
            && let Ok(x) = name.parse::<f64>()
        {
            return Key::from(x);
        }
        assert!(!name.is_empty(), "expected a key at {:?}", self.rest());
        Key::from(name)
    }

    fn term(&mut self) -> Term {
        self.skip_ws();
        if self.rest().starts_with('(') {
            return Term::Ref(self.key());
        }
        if self.rest().starts_with('\'') {
            return Term::lit(self.string());
        }
        if self.eat("[") {
            let mut items = Vec::new();
            while !self.eat("]") {
                items.push(self.term());
                self.eat(",");
            }
            return Term::List(items);
        }
        let name = self.name();
        assert!(!name.is_empty(), "expected a term at {:?}", self.rest());
        if self.eat("(") {
            let mut args = Vec::new();
            while !self.eat(")") {
                args.push(self.term());
                self.eat(",");
            }
            return Term::call(name, args);
        }
        match name {
            "None" => return Term::Lit(Value::Null),
            "True" => return Term::lit(true),
            "False" => return Term::lit(false),
            _ => {}
        }
        if let Ok(i) = name.parse::<i64>() {
            return Term::lit(i);
        }
        if name.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            && let Ok(x) = name.parse::<f64>()
        {
            return Term::lit(x);
        }
        Term::key(name)
    }
}

/// The graph as sorted `key = term` lines.
pub fn show(graph: &TaskGraph) -> String {
    let mut lines: Vec<String> = graph
        .iter()
        .map(|(key, task)| match &task.body {
            Body::Term(term) => format!("{} = {term}", key.python_str()),
            Body::Opaque(deps) => {
                let deps: Vec<String> = deps.iter().map(Key::python_str).collect();
                format!("{} = <opaque>({})", key.python_str(), deps.join(", "))
            }
        })
        .collect();
    lines.sort();
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Checks that a pass's output is a valid graph, then prints it. (The
/// references a pass hands its output are checked against the output's
/// bodies as they are handed over, in debug builds: dask's `with_deps`.)
pub fn show_checked(graph: &TaskGraph) -> String {
    graph.topology().expect("the output is a valid graph");
    show(graph)
}

/// Keys from names.
pub fn keys(names: &[&str]) -> Vec<Key> {
    names.iter().map(|name| key(name)).collect()
}

/// A value the evaluator computes.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<V>),
}

impl fmt::Display for V {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            V::Null => f.write_str("None"),
            V::Bool(b) => write!(f, "{b}"),
            V::Int(i) => write!(f, "{i}"),
            V::Float(x) => write!(f, "{x}"),
            V::Str(s) => f.write_str(s),
            V::List(items) => {
                let items: Vec<String> = items.iter().map(V::to_string).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

fn num(v: &V) -> i64 {
    match v {
        V::Int(i) => *i,
        V::Bool(b) => i64::from(*b),
        other => panic!("not a number: {other:?}"),
    }
}

fn items(v: &V) -> &[V] {
    match v {
        V::List(items) => items,
        other => panic!("not a list: {other:?}"),
    }
}

/// Evaluates tasks by key, each once, counting the calls of every op.
pub struct Evaluator<'g> {
    graph: &'g TaskGraph,
    memo: RefCell<HashMap<Key, V>>,
    pub calls: RefCell<HashMap<String, usize>>,
}

impl<'g> Evaluator<'g> {
    pub fn new(graph: &'g TaskGraph) -> Self {
        Evaluator {
            graph,
            memo: RefCell::default(),
            calls: RefCell::default(),
        }
    }

    /// The value of task `key`.
    pub fn get(&self, key: &Key) -> V {
        if let Some(v) = self.memo.borrow().get(key) {
            return v.clone();
        }
        let task = self
            .graph
            .get(key)
            .unwrap_or_else(|| panic!("no task {key}"));
        let value = match &task.body {
            Body::Term(term) => self.eval(term),
            Body::Opaque(deps) => V::List(deps.iter().map(|d| self.get(d)).collect()),
        };
        self.memo.borrow_mut().insert(key.clone(), value.clone());
        value
    }

    fn eval(&self, term: &Term) -> V {
        match term {
            Term::Lit(value) => match value {
                Value::Null => V::Null,
                Value::Bool(b) => V::Bool(*b),
                Value::Int(i) => V::Int(*i),
                Value::Float(x) => V::Float(*x),
                Value::Str(s) => V::Str(s.to_string()),
            },
            Term::Ref(key) => self.get(key),
            Term::List(items) => V::List(items.iter().map(|t| self.eval(t)).collect()),
            Term::Call { op, args } => {
                let args: Vec<V> = args.iter().map(|t| self.eval(t)).collect();
                *self
                    .calls
                    .borrow_mut()
                    .entry(op.as_str().to_owned())
                    .or_default() += 1;
                apply(op.as_str(), &args)
            }
        }
    }
}

/// The ops the tests use.
pub fn apply(op: &str, args: &[V]) -> V {
    match op {
        "inc" | "inc_only_once" => V::Int(num(&args[0]) + 1),
        "dec" => V::Int(num(&args[0]) - 1),
        "neg" => V::Int(-num(&args[0])),
        "double" => V::Int(2 * num(&args[0])),
        "add" => match (&args[0], &args[1]) {
            (V::Str(a), V::Str(b)) => V::Str(format!("{a}{b}")),
            (a, b) => V::Int(num(a) + num(b)),
        },
        "sub" => V::Int(num(&args[0]) - num(&args[1])),
        "mul" => V::Int(num(&args[0]) * num(&args[1])),
        "sum" => V::Int(items(&args[0]).iter().map(num).sum()),
        "max" => V::Int(items(&args[0]).iter().map(num).max().unwrap_or(i64::MIN)),
        "identity" => args[0].clone(),
        "len" => match &args[0] {
            V::Str(s) => V::Int(s.chars().count() as i64),
            other => V::Int(items(other).len() as i64),
        },
        "split" => match &args[0] {
            V::Str(s) => V::List(s.split_whitespace().map(|w| V::Str(w.to_owned())).collect()),
            other => panic!("split of {other:?}"),
        },
        "count" => match (&args[0], &args[1]) {
            (V::Str(s), V::Str(w)) => {
                V::Int(s.split_whitespace().filter(|x| x == w).count() as i64)
            }
            (V::List(xs), x) => V::Int(xs.iter().filter(|y| *y == x).count() as i64),
            (a, b) => panic!("count of {a:?} in {b:?}"),
        },
        "format" => {
            let V::Str(template) = &args[0] else {
                panic!("format needs a template")
            };
            let mut out = String::new();
            let mut rest = args[1..].iter();
            let mut parts = template.split("{}");
            out.push_str(parts.next().unwrap_or(""));
            for part in parts {
                out.push_str(&rest.next().map(V::to_string).unwrap_or_default());
                out.push_str(part);
            }
            V::Str(out)
        }
        // dask's test helpers: `f(*args) = args`; `func` and `func2` join
        // their arguments' text with `-` and `=`.
        "f" => V::List(args.to_vec()),
        "func" | "func2" => {
            let sep = if op == "func" { "-" } else { "=" };
            let parts: Vec<String> = args.iter().map(V::to_string).collect();
            V::Str(parts.join(sep))
        }
        other => panic!("unknown op {other}"),
    }
}

/// The references of a graph, by key: sorted `key: [deps]` lines.
pub fn show_deps(graph: &TaskGraph) -> String {
    let references = graph.references().expect("a valid graph");
    let mut lines: Vec<String> = graph
        .keys()
        .enumerate()
        .map(|(i, key)| {
            let deps: Vec<String> = references
                .get(graph_core::NodeId::new(i))
                .iter()
                .map(|&d| graph.key(d).python_str())
                .collect();
            format!("{}: [{}]", key.python_str(), deps.join(", "))
        })
        .collect();
    lines.sort();
    let mut out = lines.join("\n");
    out.push('\n');
    out
}
