//! Helpers shared by the integration tests: a parser for graphs written as
//! `key <- dep, dep` text, dask's `abcde` fixture, brute force, and checks.
#![allow(dead_code, unreachable_pub)]

use graph_core::{Dag, Key, NodeId, TaskGraph, Topology};
use graph_order::{
    Diagnostics, Order, OrderConfig, Strategy, diagnostics, lower_bound, order, ranks_by_str,
};

/// The two runs of dask's `abcde` fixture: the letters as written, and with
/// a <-> e and b <-> d swapped in every key part spelled with `a`..`e`.
pub const VARIANTS: [bool; 2] = [false, true];

/// A graph parsed from text, with dask's data flags.
pub struct Case {
    pub graph: TaskGraph,
    pub is_data: Vec<bool>,
    swap: bool,
}

impl Case {
    /// Parses `text` (the `abcde` spelling).
    pub fn parse(text: &str) -> Case {
        Case::parse_variant(text, false)
    }

    /// Parses `text`, swapping letters for the `edcba` variant if `swap`.
    ///
    /// One line per task: `KEY <- DEP, DEP, ...` (or `KEY <-`), keys in
    /// Python's spelling (`'x'`, `('a', 0)`; a bare word is a string), and an
    /// optional `[non-task: ...]` marking dask's data nodes. `#` starts a
    /// comment line.
    pub fn parse_variant(text: &str, swap: bool) -> Case {
        let mut rows: Vec<(Key, Vec<Key>, bool)> = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (lhs, rhs) = line
                .split_once("<-")
                .unwrap_or_else(|| panic!("no `<-` in {line:?}"));
            let (rhs, data) = match rhs.find('[') {
                Some(at) => (&rhs[..at], rhs[at..].starts_with("[non-task")),
                None => (rhs, false),
            };
            let key = swap_key(parse_key(lhs.trim()), swap);
            let deps = parse_keys(rhs.trim())
                .into_iter()
                .map(|k| swap_key(k, swap))
                .collect();
            rows.push((key, deps, data));
        }
        let mut graph = TaskGraph::with_capacity(rows.len());
        let mut is_data = Vec::with_capacity(rows.len());
        for (key, deps, data) in rows {
            graph.insert_opaque(key, deps).expect("distinct keys");
            is_data.push(data);
        }
        graph.topology().expect("a valid test graph");
        Case {
            graph,
            is_data,
            swap,
        }
    }

    /// Wraps a graph built in code (every node a task).
    pub fn from_graph(graph: TaskGraph) -> Case {
        let is_data = vec![false; graph.len()];
        graph.topology().expect("a valid test graph");
        Case {
            graph,
            is_data,
            swap: false,
        }
    }

    pub fn topology(&self) -> &Topology {
        self.graph.topology().expect("checked when built")
    }

    /// The node of `key` (Python spelling, in the `abcde` letters).
    pub fn node(&self, key: &str) -> NodeId {
        let key = swap_key(parse_key(key), self.swap);
        self.graph
            .node_id(&key)
            .unwrap_or_else(|| panic!("no key {key}"))
    }

    /// The order by `strategy`, with dask's tie-break and data flags; checks
    /// that it is a permutation that respects dependencies.
    pub fn order(&self, strategy: Strategy) -> Ordered<'_> {
        let config = OrderConfig {
            strategy,
            is_data: &self.is_data,
            sizes: &[],
        };
        let order =
            order(self.topology(), &ranks_by_str(self.graph.keys()), &config).expect("orders");
        assert_valid(self.topology(), order.priorities());
        let diag = diagnostics(self.topology(), &order).expect("valid order");
        Ordered {
            case: self,
            order,
            diag,
        }
    }

    pub fn dask(&self) -> Ordered<'_> {
        self.order(Strategy::Dask)
    }

    pub fn auto(&self) -> Ordered<'_> {
        self.order(Strategy::Auto)
    }

    pub fn lower_bound(&self) -> u32 {
        lower_bound(self.topology()).expect("acyclic")
    }

    /// Checks dask's pinned max pressure as an upper bound, for `Dask` and
    /// `Auto`, and that `Auto` is no worse than `Dask` and no better than the
    /// lower bound.
    pub fn assert_pressure_at_most(&self, bound: u32) {
        let dask = self.dask().max_pressure();
        let auto = self.auto().max_pressure();
        assert!(dask <= bound, "dask max pressure {dask} > {bound}");
        assert!(auto <= dask, "auto {auto} > dask {dask}");
        assert!(self.lower_bound() <= auto);
    }
}

/// An order of a [`Case`] with its diagnostics.
pub struct Ordered<'a> {
    pub case: &'a Case,
    pub order: Order,
    pub diag: Diagnostics,
}

impl Ordered<'_> {
    /// The priority of `key`.
    pub fn o(&self, key: &str) -> i64 {
        i64::from(self.order.priority(self.case.node(key)))
    }

    pub fn max_pressure(&self) -> u32 {
        self.diag.max_pressure
    }

    /// The keys in the order they run, in Python's spelling.
    pub fn sequence(&self) -> Vec<String> {
        self.order
            .sequence()
            .into_iter()
            .map(|n| self.case.graph.key(n).python_str())
            .collect()
    }

    /// Priorities of every key whose first part is one of `names`, sorted.
    pub fn sorted_of(&self, names: &[&str]) -> Vec<i64> {
        let names: Vec<Key> = names
            .iter()
            .map(|n| swap_key(Key::from(*n), self.case.swap))
            .collect();
        let mut res: Vec<i64> = self
            .case
            .graph
            .keys()
            .enumerate()
            .filter(|(_, k)| match k {
                Key::Tuple(parts) => names.contains(&parts[0]),
                _ => false,
            })
            .map(|(i, _)| i64::from(self.order.priorities()[i]))
            .collect();
        res.sort_unstable();
        res
    }
}

/// Checks that `priorities` is a permutation of `0..n` and that every
/// dependency comes first.
pub fn assert_valid(dag: &impl Dag, priorities: &[u32]) {
    let n = dag.node_count();
    assert_eq!(priorities.len(), n);
    let mut seen = vec![false; n];
    for &p in priorities {
        assert!((p as usize) < n && !seen[p as usize], "not a permutation");
        seen[p as usize] = true;
    }
    for v in 0..n {
        for &d in dag.dependencies(NodeId::new(v)) {
            assert!(
                priorities[d.index()] < priorities[v],
                "node {v} runs before its dependency {d}"
            );
        }
    }
}

/// The lowest max pressure over every topological order (exhaustive; for
/// graphs of a dozen nodes at most).
pub fn brute_force_min_pressure(dag: &impl Dag) -> u32 {
    let topology = Topology::checked(dag).expect("an acyclic graph");
    let dag: &Topology = &topology;
    let n = dag.node_count();
    let mut missing: Vec<usize> = (0..n)
        .map(|v| dag.dependencies(NodeId::new(v)).len())
        .collect();
    let mut remaining: Vec<usize> = (0..n)
        .map(|v| dag.dependents(NodeId::new(v)).len())
        .collect();
    let mut done = vec![false; n];
    let mut best = u32::MAX;
    search(
        dag,
        &mut missing,
        &mut remaining,
        &mut done,
        0,
        0,
        0,
        &mut best,
    );
    best
}

#[allow(clippy::too_many_arguments)]
fn search(
    dag: &Topology,
    missing: &mut [usize],
    remaining: &mut [usize],
    done: &mut [bool],
    count: usize,
    in_mem: u32,
    peak: u32,
    best: &mut u32,
) {
    let n = missing.len();
    if peak >= *best {
        return;
    }
    if count == n {
        *best = peak;
        return;
    }
    for v in 0..n {
        if done[v] || missing[v] != 0 {
            continue;
        }
        let node = NodeId::new(v);
        let peak = peak.max(in_mem);
        let mut released = 0;
        for &d in dag.dependencies(node) {
            remaining[d.index()] -= 1;
            if remaining[d.index()] == 0 {
                released += 1;
            }
        }
        for &d in dag.dependents(node) {
            missing[d.index()] -= 1;
        }
        done[v] = true;
        let held = !dag.dependents(node).is_empty();
        let next = in_mem + u32::from(held) - released;
        search(dag, missing, remaining, done, count + 1, next, peak, best);
        done[v] = false;
        for &d in dag.dependents(node) {
            missing[d.index()] += 1;
        }
        for &d in dag.dependencies(node) {
            remaining[d.index()] += 1;
        }
    }
}

/// A `Dag` over plain vectors, for graphs a `Topology` refuses (cycles).
pub struct VecDag {
    pub deps: Vec<Vec<NodeId>>,
    pub dependents: Vec<Vec<NodeId>>,
}

impl VecDag {
    pub fn new(n: usize, edges: &[(usize, usize)]) -> VecDag {
        let mut deps = vec![Vec::new(); n];
        let mut dependents = vec![Vec::new(); n];
        for &(a, b) in edges {
            deps[b].push(NodeId::new(a));
            dependents[a].push(NodeId::new(b));
        }
        VecDag { deps, dependents }
    }
}

impl Dag for VecDag {
    fn node_count(&self) -> usize {
        self.deps.len()
    }

    fn dependencies(&self, node: NodeId) -> &[NodeId] {
        &self.deps[node.index()]
    }
}

fn swap_key(key: Key, swap: bool) -> Key {
    if !swap {
        return key;
    }
    match key {
        Key::Str(s) => {
            let letters = s.trim_end_matches(|c: char| c.is_ascii_digit());
            if !letters.is_empty() && letters.chars().all(|c| ('a'..='e').contains(&c)) {
                let swapped: String = s
                    .chars()
                    .map(|c| match c {
                        'a' => 'e',
                        'e' => 'a',
                        'b' => 'd',
                        'd' => 'b',
                        other => other,
                    })
                    .collect();
                Key::from(swapped)
            } else {
                Key::Str(s)
            }
        }
        Key::Tuple(parts) => Key::tuple(parts.iter().map(|p| swap_key(p.clone(), true))),
        other => other,
    }
}

/// Parses one key in Python's spelling.
pub fn parse_key(text: &str) -> Key {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let key = p.key();
    p.ws();
    assert_eq!(p.i, p.s.len(), "trailing text in key {text:?}");
    key
}

fn parse_keys(text: &str) -> Vec<Key> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let mut keys = Vec::new();
    p.ws();
    while p.i < p.s.len() {
        keys.push(p.key());
        p.ws();
        if p.i < p.s.len() {
            assert_eq!(p.s[p.i], b',', "expected `,` in {text:?}");
            p.i += 1;
            p.ws();
        }
    }
    keys
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }

    fn key(&mut self) -> Key {
        self.ws();
        match self.s[self.i] {
            b'(' => {
                self.i += 1;
                let mut parts = Vec::new();
                loop {
                    self.ws();
                    if self.s[self.i] == b')' {
                        self.i += 1;
                        break;
                    }
                    parts.push(self.key());
                    self.ws();
                    if self.s[self.i] == b',' {
                        self.i += 1;
                    }
                }
                Key::tuple(parts)
            }
            q @ (b'\'' | b'"') => {
                self.i += 1;
                let start = self.i;
                while self.s[self.i] != q {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).expect("utf-8");
                self.i += 1;
                Key::from(text)
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b')' | b' ') {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).expect("utf-8");
                match text.parse::<i64>() {
                    Ok(i) => Key::from(i),
                    Err(_) => Key::from(text),
                }
            }
        }
    }
}

/// Every strategy.
pub const STRATEGIES: [Strategy; 6] = [
    Strategy::Auto,
    Strategy::Exhaustive,
    Strategy::Dask,
    Strategy::TreeOptimal,
    Strategy::DepthFirst,
    Strategy::BreadthFirst,
];
