//! Rewriting speed: terms per second against the number of rules (matching
//! should stay nearly flat from 1 to 1000 rules), and whole graphs of 10^4 to
//! 10^6 tasks with six rules, sequential and parallel.

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher, black_box};
use graph_core::generate;
use graph_core::generate::Rng;
use graph_core::{TaskGraph, Term};
use graph_rewrite::{
    Pattern, RewriteRule, RewriteStrategy, RuleSet, par_rewrite_graph, par_rewrite_graph_in_place,
    rewrite_graph,
};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
const TERMS: usize = 10_000;

fn main() {
    divan::main();
}

fn x() -> Pattern {
    Pattern::var("x")
}

fn y() -> Pattern {
    Pattern::var("y")
}

/// `n` rules `f{k}(g(?x), ?y) -> h{k}(?x, ?y)`, each with its own op.
fn many_rules(n: usize) -> RuleSet {
    RuleSet::new((0..n).map(|k| {
        RewriteRule::new(
            Pattern::call(format!("f{k}").as_str(), [Pattern::call("g", [x()]), y()]),
            Pattern::call(format!("h{k}").as_str(), [x(), y()]),
        )
        .unwrap()
    }))
}

/// Terms of about seven nodes. Half are headed by `f0`, which every rule
/// set has a rule for, half by ops no rule names; so the rewriting work is the
/// same whatever the number of rules, and only matching cost could vary.
fn terms(n: usize) -> Vec<Term> {
    let mut rng = Rng::new(7);
    (0..n)
        .map(|i| {
            let f = if i % 2 == 0 {
                "f0".to_owned()
            } else {
                format!("f{}", 1000 + rng.below(1000))
            };
            let leaf = Term::key(("x", rng.below(100) as i64));
            let inner = if rng.below(2) == 0 {
                Term::call("g", [leaf])
            } else {
                Term::call("add", [leaf, Term::lit(1)])
            };
            Term::call(
                "add",
                [
                    Term::call(f.as_str(), [inner, Term::lit(rng.below(5) as i64)]),
                    Term::lit(0),
                ],
            )
        })
        .collect()
}

#[divan::bench(args = [1, 10, 100, 1000])]
fn terms_vs_rules(bencher: Bencher<'_, '_>, n_rules: usize) {
    let rules = many_rules(n_rules);
    let terms = terms(TERMS);
    bencher.counter(ItemsCount::new(TERMS)).bench(|| {
        let mut changed = 0;
        for term in &terms {
            changed += usize::from(&rules.rewrite(term, RewriteStrategy::BottomUp) != term);
        }
        assert!(changed > 0);
        changed
    });
}

/// Six rules over the terms of `generate::random_dag` (`inc(max([refs]))`)
/// and the arithmetic a user might clean up. None is longer than a term it
/// could meet, since dask's matcher crashes on such a term (`max([x, y])`
/// against `max([a])`), and `benches/dask_rewrite.py` runs the same six.
fn six_rules() -> RuleSet {
    let inc = |p| Pattern::call("inc", [p]);
    let neg = |p| Pattern::call("neg", [p]);
    RuleSet::from_pairs([
        (inc(Pattern::call("max", [Pattern::list([x()])])), inc(x())),
        (Pattern::call("add", [x(), Pattern::lit(0)]), x()),
        (
            Pattern::call("mul", [x(), Pattern::lit(2)]),
            Pattern::call("add", [x(), x()]),
        ),
        (inc(inc(x())), Pattern::call("add", [x(), Pattern::lit(2)])),
        (Pattern::call("sum", [Pattern::list([x()])]), x()),
        (neg(neg(x())), x()),
    ])
    .unwrap()
}

fn graph(n: usize) -> TaskGraph {
    generate::random_dag(n, 42)
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn graph_sequential(bencher: Bencher<'_, '_>, n: usize) {
    let rules = six_rules();
    let graph = graph(n);
    bencher.counter(ItemsCount::new(n)).bench(|| {
        let (out, report) = rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp).unwrap();
        assert!(report.changed > n / 5);
        out
    });
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn graph_par(bencher: Bencher<'_, '_>, n: usize) {
    let rules = six_rules();
    let graph = graph(n);
    bencher.counter(ItemsCount::new(n)).bench(|| {
        let (out, report) = par_rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp).unwrap();
        assert!(report.changed > n / 5);
        out
    });
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn graph_par_in_place(bencher: Bencher<'_, '_>, n: usize) {
    let rules = six_rules();
    let graph = graph(n);
    bencher
        .counter(ItemsCount::new(n))
        .with_inputs(|| graph.clone())
        .bench_local_refs(|graph| {
            let report =
                par_rewrite_graph_in_place(graph, &rules, RewriteStrategy::BottomUp).unwrap();
            assert!(report.changed > n / 5);
            black_box(report)
        });
}
