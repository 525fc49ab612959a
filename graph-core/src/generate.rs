//! Seeded graph generators: the shapes `taskgraph generate` writes, and the
//! graphs the tests and benchmarks of every crate sweep.
//!
//! Every generator builds a runnable graph: literals are integers and the ops
//! are `inc`, `neg`, `add`, `sum`, `max` and `identity` over them, so an
//! executor can check its results. Keys follow dask's naming: `('x', i, j)`
//! for chunk `(i, j)` of array `x`.
//!
//! ```
//! use graph_core::generate::{self, Shape};
//!
//! let graph = generate::chain(10);
//! assert_eq!(graph.len(), 10);
//! for shape in Shape::ALL {
//!     let graph = shape.generate(1_000, 7);
//!     assert!(graph.topology().is_ok(), "{}", shape.name());
//! }
//! ```

use crate::{Dag, Key, TaskGraph, Term};

/// A small, fast, seeded pseudo-random generator (SplitMix64): the same seed
/// gives the same graphs on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }
}

fn insert(graph: &mut TaskGraph, key: Key, term: Term) {
    graph
        .insert(key, term)
        .expect("generated keys are distinct");
}

fn refs(keys: impl IntoIterator<Item = Key>) -> Term {
    Term::list(keys.into_iter().map(Term::Ref))
}

/// A linear chain of `n` tasks: `('chain', 0)` is a literal, each next task
/// increments the one before.
pub fn chain(n: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(n);
    for i in 0..n as i64 {
        let term = if i == 0 {
            Term::lit(0)
        } else {
            Term::call("inc", [Term::key(("chain", i - 1))])
        };
        insert(&mut graph, Key::from(("chain", i)), term);
    }
    graph
}

/// A tree reduction: `n_leaves` literals `('leaf', i)`, summed `fan_in` at a
/// time, level after level, into one `('sum', level, 0)` root.
pub fn tree(n_leaves: usize, fan_in: usize) -> TaskGraph {
    let fan_in = fan_in.max(2);
    let mut graph = TaskGraph::with_capacity(n_leaves * fan_in / (fan_in - 1) + 1);
    let mut level: Vec<Key> = (0..n_leaves as i64)
        .map(|i| Key::from(("leaf", i)))
        .collect();
    for (i, key) in level.iter().enumerate() {
        insert(&mut graph, key.clone(), Term::lit(i as i64));
    }
    let mut depth = 0_i64;
    while level.len() > 1 || depth == 0 {
        depth += 1;
        level = level
            .chunks(fan_in)
            .enumerate()
            .map(|(i, group)| {
                let key = Key::from(("sum", depth, i as i64));
                insert(
                    &mut graph,
                    key.clone(),
                    Term::call("sum", [refs(group.iter().cloned())]),
                );
                key
            })
            .collect();
    }
    graph
}

/// `n` diamonds in a row: `('d', k, 0)` feeds `('d', k, 1)` and `('d', k, 2)`,
/// which both feed `('d', k, 3)`, which feeds the next diamond's top.
pub fn diamonds(n: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(4 * n);
    for k in 0..n as i64 {
        let top = if k == 0 {
            Term::lit(1)
        } else {
            Term::call("inc", [Term::key(("d", k - 1, 3))])
        };
        insert(&mut graph, Key::from(("d", k, 0)), top);
        insert(
            &mut graph,
            Key::from(("d", k, 1)),
            Term::call("inc", [Term::key(("d", k, 0))]),
        );
        insert(
            &mut graph,
            Key::from(("d", k, 2)),
            Term::call("neg", [Term::key(("d", k, 0))]),
        );
        let bottom = Term::call("add", [Term::key(("d", k, 1)), Term::key(("d", k, 2))]);
        insert(&mut graph, Key::from(("d", k, 3)), bottom);
    }
    graph
}

/// A random DAG of `n` tasks `('r', i)`: each task is a literal or takes one
/// to four dependencies among the 64 tasks before it (so the graph has both
/// locality and long-range edges), as `inc(max([...]))`.
pub fn random_dag(n: usize, seed: u64) -> TaskGraph {
    const WINDOW: usize = 64;
    let mut rng = Rng::new(seed);
    let mut graph = TaskGraph::with_capacity(n);
    let mut picked = Vec::new();
    for i in 0..n {
        let term = if i == 0 || rng.below(8) == 0 {
            Term::lit(rng.below(100) as i64)
        } else {
            let lo = i.saturating_sub(WINDOW);
            picked.clear();
            for _ in 0..1 + rng.below(4) {
                let dep = lo + rng.below(i - lo);
                if !picked.contains(&dep) {
                    picked.push(dep);
                }
            }
            let deps = picked.iter().map(|&d| Key::from(("r", d as i64)));
            Term::call("inc", [Term::call("max", [refs(deps)])])
        };
        insert(&mut graph, Key::from(("r", i as i64)), term);
    }
    graph
}

/// dask's tree reduction of a 2-D grid of chunks: blocks of up to 4 x 4 chunks
/// are summed into one, until one chunk `(name, 0, 0)` (or `(name, level,
/// 0, 0)` below the top) is left. Returns the root.
fn reduce_grid(graph: &mut TaskGraph, name: &str, mut grid: Vec<Vec<Key>>) -> Key {
    const SPLIT: usize = 4;
    let mut level = 0_i64;
    loop {
        let rows = grid.len().div_ceil(SPLIT);
        let cols = grid[0].len().div_ceil(SPLIT);
        let last = rows == 1 && cols == 1;
        level += 1;
        let mut next = Vec::with_capacity(rows);
        for bi in 0..rows {
            let mut row = Vec::with_capacity(cols);
            for bj in 0..cols {
                let block = grid[bi * SPLIT..((bi + 1) * SPLIT).min(grid.len())]
                    .iter()
                    .flat_map(|r| {
                        r[bj * SPLIT..((bj + 1) * SPLIT).min(r.len())]
                            .iter()
                            .cloned()
                    });
                let key = if last {
                    Key::from((name, 0, 0))
                } else {
                    Key::from((Key::from(name), level, bi as i64, bj as i64))
                };
                insert(graph, key.clone(), Term::call("sum", [refs(block)]));
                row.push(key);
            }
            next.push(row);
        }
        grid = next;
        if last {
            return grid[0][0].clone();
        }
    }
}

fn chunk_grid(graph: &mut TaskGraph, name: &str, nx: usize, ny: usize) -> Vec<Vec<Key>> {
    (0..nx as i64)
        .map(|i| {
            (0..ny as i64)
                .map(|j| {
                    let key = Key::from((name, i, j));
                    insert(graph, key.clone(), Term::lit(i * ny as i64 + j));
                    key
                })
                .collect()
        })
        .collect()
}

fn map_grid(
    graph: &mut TaskGraph,
    name: &str,
    grid: &[Vec<Key>],
    mut term: impl FnMut(usize, usize) -> Term,
) -> Vec<Vec<Key>> {
    grid.iter()
        .enumerate()
        .map(|(i, row)| {
            (0..row.len())
                .map(|j| {
                    let key = Key::from((name, i as i64, j as i64));
                    insert(graph, key.clone(), term(i, j));
                    key
                })
                .collect()
        })
        .collect()
}

/// `(x + x.T).sum()` on an `n x n` grid of chunks: each chunk `('x', i, j)`
/// is transposed into `('transpose', j, i)`, added to its mirror, summed
/// within the chunk, then reduced as dask reduces (blocks of 4 x 4).
pub fn array_sum_transpose(n: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(4 * n * n + n * n / 8 + 2);
    let x = chunk_grid(&mut graph, "x", n, n);
    let t = map_grid(&mut graph, "transpose", &x, |i, j| {
        Term::call("identity", [Term::Ref(x[j][i].clone())])
    });
    let added = map_grid(&mut graph, "add", &x, |i, j| {
        Term::call(
            "add",
            [Term::Ref(x[i][j].clone()), Term::Ref(t[i][j].clone())],
        )
    });
    let partial = map_grid(&mut graph, "sum-chunk", &x, |i, j| {
        Term::call("sum", [refs([added[i][j].clone()])])
    });
    reduce_grid(&mut graph, "sum", partial);
    graph
}

/// `x.map_overlap(f, depth=1).sum()` on an `nx x ny` grid: each chunk gathers
/// its halo from the (up to) nine chunks around it, is mapped and trimmed,
/// then everything is reduced.
pub fn array_overlap(nx: usize, ny: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(4 * nx * ny + nx * ny / 8 + 2);
    let x = chunk_grid(&mut graph, "x", nx, ny);
    let halo = map_grid(&mut graph, "overlap", &x, |i, j| {
        let neighbours = (i.saturating_sub(1)..(i + 2).min(nx)).flat_map(|a| {
            let x = &x;
            (j.saturating_sub(1)..(j + 2).min(ny)).map(move |b| x[a][b].clone())
        });
        Term::call("sum", [refs(neighbours)])
    });
    let mapped = map_grid(&mut graph, "f", &x, |i, j| {
        Term::call("inc", [Term::Ref(halo[i][j].clone())])
    });
    let trimmed = map_grid(&mut graph, "trim", &x, |i, j| {
        Term::call("identity", [Term::Ref(mapped[i][j].clone())])
    });
    reduce_grid(&mut graph, "sum", trimmed);
    graph
}

/// `x.cumsum(axis=0).cumsum(axis=1).sum()` on an `nx x ny` grid, shaped as
/// dask's `cumreduction`: a cumulative sum within each chunk, a running carry
/// from chunk to chunk along the axis, the carry added back, then the same
/// along the other axis, then a tree reduction.
pub fn array_cumsum(nx: usize, ny: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(7 * nx * ny + nx * ny / 8 + 2);
    let x = chunk_grid(&mut graph, "x", nx, ny);
    let along = |graph: &mut TaskGraph, input: &[Vec<Key>], axis: usize| {
        let local = map_grid(graph, &format!("cumsum-{axis}"), input, |i, j| {
            Term::call("identity", [Term::Ref(input[i][j].clone())])
        });
        let mut carry: Vec<Vec<Key>> = Vec::new();
        let carry_name = format!("carry-{axis}");
        // Built row by row so that each carry can refer to the one before it.
        for i in 0..nx {
            let mut row: Vec<Key> = Vec::with_capacity(ny);
            for j in 0..ny {
                let key = Key::from((carry_name.as_str(), i as i64, j as i64));
                let before = match (axis, i, j) {
                    (0, 0, _) | (1, _, 0) => None,
                    (0, i, j) => Some((carry[i - 1][j].clone(), local[i - 1][j].clone())),
                    (_, i, j) => Some((row[j - 1].clone(), local[i][j - 1].clone())),
                };
                let term = match before {
                    None => Term::lit(0),
                    Some((carry, previous)) => {
                        Term::call("add", [Term::Ref(carry), Term::Ref(previous)])
                    }
                };
                insert(graph, key.clone(), term);
                row.push(key);
            }
            carry.push(row);
        }
        map_grid(graph, &format!("cumsum-out-{axis}"), input, |i, j| {
            Term::call(
                "add",
                [
                    Term::Ref(local[i][j].clone()),
                    Term::Ref(carry[i][j].clone()),
                ],
            )
        })
    };
    let first = along(&mut graph, &x, 0);
    let second = along(&mut graph, &first, 1);
    reduce_grid(&mut graph, "sum", second);
    graph
}

/// A complete bipartite block: `m` mappers `('map', i)`, and `n` reducers
/// `('reduce', j)` that each sum every mapper, so `m * n` edges.
pub fn shuffle(m: usize, n: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(m + n);
    let mappers: Vec<Key> = (0..m as i64).map(|i| Key::from(("map", i))).collect();
    for (i, key) in mappers.iter().enumerate() {
        insert(&mut graph, key.clone(), Term::lit(i as i64));
    }
    for j in 0..n as i64 {
        insert(
            &mut graph,
            Key::from(("reduce", j)),
            Term::call("sum", [refs(mappers.iter().cloned())]),
        );
    }
    graph
}

/// BNDL's example of stages: `m` partitions, each read and mapped (narrow),
/// shuffled into `n` reducers that each read every mapped partition (wide),
/// each reducer's result mapped again (narrow). Coalesced, it is two stages
/// of `m` and `n` tasks. `2 m + 2 n` tasks, `2 m + m n + n` edges.
///
/// # Example
///
/// ```
/// use graph_core::generate;
///
/// let graph = generate::map_shuffle_map(4, 2);
/// assert_eq!(graph.len(), 12);
/// assert_eq!(graph.topology()?.edge_count(), 4 + 8 + 2);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn map_shuffle_map(m: usize, n: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(2 * (m + n));
    let mapped: Vec<Key> = (0..m as i64).map(|i| Key::from(("map", i))).collect();
    for (i, key) in (0..m as i64).zip(&mapped) {
        insert(&mut graph, Key::from(("read", i)), Term::lit(i));
        let map = Term::call("inc", [Term::key(("read", i))]);
        insert(&mut graph, key.clone(), map);
    }
    for j in 0..n as i64 {
        let reduce = Term::call(
            "add",
            [
                Term::call("sum", [refs(mapped.iter().cloned())]),
                Term::lit(j),
            ],
        );
        insert(&mut graph, Key::from(("reduce", j)), reduce);
        let map = Term::call("neg", [Term::key(("reduce", j))]);
        insert(&mut graph, Key::from(("output", j)), map);
    }
    graph
}

/// A dataframe-style shuffle of `m` input partitions into `n` outputs, shaped
/// as dask builds it: each input is split into `n` pieces `('split', i, j)`,
/// and output `j` concatenates piece `j` of every input. `m + m * n + n`
/// tasks, `2 * m * n` edges.
pub fn shuffle_split(m: usize, n: usize) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(m + m * n + n);
    for i in 0..m as i64 {
        insert(&mut graph, Key::from(("input", i)), Term::lit(i));
        for j in 0..n as i64 {
            let piece = Term::call("add", [Term::key(("input", i)), Term::lit(j)]);
            insert(&mut graph, Key::from(("split", i, j)), piece);
        }
    }
    for j in 0..n as i64 {
        let pieces = (0..m as i64).map(|i| Key::from(("split", i, j)));
        insert(
            &mut graph,
            Key::from(("output", j)),
            Term::call("sum", [refs(pieces)]),
        );
    }
    graph
}

/// The word-count graph of dask's optimization documentation: `words` (a
/// text), `nwords = len(split(words))`, three words `val1..3` to look for,
/// `count1..3 = count(words, valN)`, `format1..3` (a sentence of each count)
/// and `print1..3`, which return their sentence.
pub fn word_count() -> TaskGraph {
    const FRUITS: [&str; 3] = ["orange", "apple", "pear"];
    let mut graph = TaskGraph::new();
    let mut add = |key: String, term| insert(&mut graph, Key::from(key), term);
    add(
        "words".into(),
        Term::lit("apple orange apple pear orange pear pear"),
    );
    add(
        "nwords".into(),
        Term::call("len", [Term::call("split", [Term::key("words")])]),
    );
    for (n, fruit) in (1..).zip(FRUITS) {
        add(format!("val{n}"), Term::lit(fruit));
    }
    for n in 1..=FRUITS.len() {
        add(
            format!("count{n}"),
            Term::call("count", [Term::key("words"), Term::key(format!("val{n}"))]),
        );
    }
    for n in 1..=FRUITS.len() {
        let sentence = [
            Term::lit("word list has {} occurrences of {}, out of {} words"),
            Term::key(format!("count{n}")),
            Term::key(format!("val{n}")),
            Term::key("nwords"),
        ];
        add(format!("format{n}"), Term::call("format", sentence));
    }
    for n in 1..=FRUITS.len() {
        add(
            format!("print{n}"),
            Term::call("identity", [Term::key(format!("format{n}"))]),
        );
    }
    graph
}

/// The generator shapes, for tests and benchmarks that sweep all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// [`chain`].
    Chain,
    /// [`tree`] with fan-in 4.
    Tree,
    /// [`diamonds`].
    Diamonds,
    /// [`random_dag`].
    Random,
    /// [`array_sum_transpose`].
    ArraySumTranspose,
    /// [`array_overlap`].
    ArrayOverlap,
    /// [`array_cumsum`].
    ArrayCumsum,
    /// [`shuffle_split`].
    Shuffle,
    /// [`shuffle`] of as many mappers as reducers: every reducer reads every
    /// mapper, so the edges grow as the square of the tasks (in
    /// [`Shape::DENSE`], not [`Shape::ALL`]).
    AllToAll,
    /// [`shared_producers`]: producers of 4 MB each read by two small tasks,
    /// all gathered by one, every task with its `size` (in
    /// [`Shape::SIZED`], not [`Shape::ALL`]).
    Producers,
}

impl Shape {
    /// Every shape whose edges grow linearly with its tasks: what tests and
    /// benchmarks sweep.
    pub const ALL: [Shape; 8] = [
        Shape::Chain,
        Shape::Tree,
        Shape::Diamonds,
        Shape::Random,
        Shape::ArraySumTranspose,
        Shape::ArrayOverlap,
        Shape::ArrayCumsum,
        Shape::Shuffle,
    ];

    /// The shapes whose edges grow as the square of their tasks.
    pub const DENSE: [Shape; 1] = [Shape::AllToAll];

    /// The shapes whose results differ in size, which their tasks carry.
    pub const SIZED: [Shape; 1] = [Shape::Producers];

    /// A short name, for benchmark and test labels.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::Tree => "tree",
            Shape::Diamonds => "diamonds",
            Shape::Random => "random",
            Shape::ArraySumTranspose => "array-sum-transpose",
            Shape::ArrayOverlap => "array-overlap",
            Shape::ArrayCumsum => "array-cumsum",
            Shape::Shuffle => "shuffle",
            Shape::AllToAll => "all-to-all",
            Shape::Producers => "producers",
        }
    }

    /// A graph of this shape with about `tasks` tasks (at least a handful).
    /// Only [`Shape::Random`] uses the seed.
    pub fn generate(self, tasks: usize, seed: u64) -> TaskGraph {
        let side = |per_chunk: f64| ((tasks as f64 / per_chunk).sqrt().round() as usize).max(2);
        match self {
            Shape::Chain => chain(tasks.max(2)),
            Shape::Tree => tree((tasks * 3 / 4).max(2), 4),
            Shape::Diamonds => diamonds((tasks / 4).max(1)),
            Shape::Random => random_dag(tasks.max(2), seed),
            Shape::ArraySumTranspose => array_sum_transpose(side(4.07)),
            Shape::ArrayOverlap => {
                let n = side(4.07);
                array_overlap(n, n)
            }
            Shape::ArrayCumsum => {
                let n = side(7.07);
                array_cumsum(n, n)
            }
            Shape::Shuffle => {
                let n = side(1.0);
                shuffle_split(n, n)
            }
            Shape::AllToAll => {
                let n = (tasks / 2).max(2);
                shuffle(n, n)
            }
            Shape::Producers => shared_producers((tasks / 3).max(1), 2, 4_000_000),
        }
    }
}

/// `graph` turned into a graph for testing memory: every task that some
/// task reads becomes `blob(bytes, i, inputs...)`, a string of `bytes` bytes
/// that depends on its position `i` and on each of its inputs, and every
/// leaf becomes `checksum(inputs...)`, a small integer that depends on all
/// it reads; every task carries `"size": bytes`. The shape, and so the
/// order and the pressure, stay those of `graph`; only the values grow.
///
/// `blob` and `checksum` are built-in ops of `graph-exec`.
///
/// # Example
///
/// ```
/// use graph_core::{Dag, generate};
///
/// let graph = generate::with_value_bytes(&generate::chain(3), 1024)?;
/// let body = |i| graph.task(graph_core::NodeId::new(i)).body.term().unwrap().to_string();
/// assert_eq!(body(0), "blob(1024, 0)");
/// assert_eq!(body(1), "blob(1024, 1, ('chain', 0))");
/// assert_eq!(body(2), "checksum(('chain', 1))");
/// assert_eq!(graph.task(graph_core::NodeId::new(2)).size, Some(1024));
/// # Ok::<(), graph_core::Error>(())
/// ```
///
/// # Errors
///
/// What [`TaskGraph::topology`] says of `graph`: a generated graph has no
/// missing key or cycle, but may have more edges than 32-bit ids allow
/// ([`Error::TooLarge`](crate::Error::TooLarge)).
pub fn with_value_bytes(graph: &TaskGraph, bytes: u64) -> Result<TaskGraph, crate::Error> {
    let topology = graph.topology()?;
    let mut out = TaskGraph::with_capacity(graph.len());
    for (i, key) in graph.keys().enumerate() {
        let node = crate::NodeId::new(i);
        let inputs = topology
            .dependencies(node)
            .iter()
            .map(|&dep| Term::Ref(graph.key(dep).clone()));
        let term = if topology.dependents(node).is_empty() {
            Term::call("checksum", inputs)
        } else {
            let head = [
                Term::lit(i64::try_from(bytes).unwrap_or(i64::MAX)),
                Term::lit(i as i64),
            ];
            Term::call("blob", head.into_iter().chain(inputs))
        };
        let task = crate::Task {
            body: crate::Body::Term(term),
            size: Some(bytes),
            cost: None,
        };
        out.insert_task(key.clone(), task)
            .expect("the keys of a graph are distinct");
    }
    Ok(out)
}

/// `producers` large results (`('blob', p)`, the built-in op `blob` of
/// `bytes` bytes), each read by `readers` small tasks (`len`, `checksum`,
/// then `('checksum', p, r)` for more), and every reader's result gathered
/// by one `list` task, `'total'`, which lists the first readers of every
/// producer, then the second ones, and so on. Every task carries its
/// `size`: `bytes` for a producer, 8 for the rest.
///
/// Counted in results, every order holds all `producers * readers` small
/// results before `'total'`, whatever it holds of the producers; in bytes,
/// the best order runs each producer's readers right after it and holds one
/// producer at a time.
///
/// ```
/// use graph_core::{Dag, Key, generate};
///
/// let graph = generate::shared_producers(40, 2, 4_000_000);
/// assert_eq!(graph.len(), 40 + 80 + 1);
/// let total = graph.node_id(&Key::from("total")).unwrap();
/// assert_eq!(graph.topology()?.dependencies(total).len(), 80);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn shared_producers(producers: usize, readers: usize, bytes: u64) -> TaskGraph {
    let mut graph = TaskGraph::with_capacity(producers * (readers + 1) + 1);
    let mut sized = |key: Key, term: Term, size: u64| {
        insert(&mut graph, key, term);
        // Inserted last: the highest node.
        let node = crate::NodeId::new(graph.len() - 1);
        graph.task_mut(node).size = Some(size);
    };
    let blob = |p: usize| Key::from(("blob", p as i64));
    for p in 0..producers {
        let term = Term::call(
            "blob",
            [
                Term::lit(i64::try_from(bytes).unwrap_or(i64::MAX)),
                Term::lit(p as i64),
            ],
        );
        sized(blob(p), term, bytes);
    }
    let reader = |p: usize, r: usize| match r {
        0 => (Key::from(("len", p as i64)), "len"),
        1 => (Key::from(("checksum", p as i64)), "checksum"),
        r => (Key::from(("checksum", p as i64, r as i64)), "checksum"),
    };
    let mut gathered = Vec::with_capacity(producers * readers);
    for r in 0..readers {
        for p in 0..producers {
            let (key, op) = reader(p, r);
            let term = Term::call(op, [Term::Ref(blob(p))]);
            gathered.push(Term::Ref(key.clone()));
            sized(key, term, 8);
        }
    }
    insert(&mut graph, Key::from("total"), Term::call("list", gathered));
    graph
}
