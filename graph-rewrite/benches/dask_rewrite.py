"""dask.rewrite on the workloads of benches/rewrite.rs, for a side-by-side.

Run with a Python that has dask installed, for example the venv that
`cargo xtask bench --compare` makes:

    target/venv-bench/bin/python graph-rewrite/benches/dask_rewrite.py [max_tasks]

`cargo xtask bench --compare` itself times the `terms_vs_rules` workload
below (through scripts/bench_compare.py, which imports this file) beside the
divan figures of the same bench, and dask.rewrite against `taskgraph rewrite`
on the graphs of `taskgraph generate`.

The graphs are those of graph_core::testing::random_dag (same seeded
generator, same shapes: each task a literal or inc(max([refs]))), the six
rules are those of the Rust bench (none longer than a term it can meet:
dask's matcher raises IndexError on such a term, for example max([x, y])
against max([a])), and the timed part is rewriting every
task with the default bottom-up strategy, as valmap(rs.rewrite, dsk).
"""

import sys
import time

from dask.rewrite import RewriteRule, RuleSet

MASK = (1 << 64) - 1


class Rng:
    """SplitMix64, as graph_core::testing::Rng."""

    def __init__(self, seed):
        self.state = seed

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, bound):
        return (self.next_u64() * bound) >> 64


def inc(x):
    return x + 1


def max_(xs):
    return max(xs)


def add(x, y):
    return x + y


def mul(x, y):
    return x * y


def random_dag(n, seed):
    """The tasks of graph_core::testing::random_dag(n, seed)."""
    window = 64
    rng = Rng(seed)
    dsk = {}
    for i in range(n):
        if i == 0 or rng.below(8) == 0:
            term = rng.below(100)
        else:
            lo = max(0, i - window)
            picked = []
            for _ in range(1 + rng.below(4)):
                dep = lo + rng.below(i - lo)
                if dep not in picked:
                    picked.append(dep)
            term = (inc, (max_, [("r", d) for d in picked]))
        dsk[("r", i)] = term
    return dsk


def neg(x):
    return -x


def six_rules():
    v = ("x",)
    return RuleSet(
        RewriteRule((inc, (max_, ["x"])), (inc, "x"), v),
        RewriteRule((add, "x", 0), "x", v),
        RewriteRule((mul, "x", 2), (add, "x", "x"), v),
        RewriteRule((inc, (inc, "x")), (add, "x", 2), v),
        RewriteRule((sum, ["x"]), "x", v),
        RewriteRule((neg, (neg, "x")), "x", v),
    )


def g(x):
    return x


def many_rules(n):
    """n rules f{k}(g(x), y) -> h{k}(x, y), each op its own function."""
    rules = []
    for k in range(n):
        f = type(f"f{k}", (), {"__call__": lambda self, *a: a})()
        h = type(f"h{k}", (), {"__call__": lambda self, *a: a})()
        rules.append(RewriteRule((f, (g, "x"), "y"), (h, "x", "y"), ("x", "y")))
    return RuleSet(*rules)


def terms(rules, n):
    """As the Rust bench: half the terms headed by f0, half by unknown ops."""
    rng = Rng(7)
    f0 = rules.rules[0].lhs[0]
    others = [type(f"f{1000 + k}", (), {"__call__": lambda self, *a: a})() for k in range(1000)]
    out = []
    for i in range(n):
        f = f0 if i % 2 == 0 else others[rng.below(1000)]
        leaf = ("x", rng.below(100))
        inner = (g, leaf) if rng.below(2) == 0 else (add, leaf, 1)
        out.append((add, (f, inner, rng.below(5)), 0))
    return out


def best_of(repeats, fn):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    max_tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    n_terms = 10_000
    for n_rules in [1, 10, 100, 1000]:
        rules = many_rules(n_rules)
        ts = terms(rules, n_terms)
        seconds = best_of(3, lambda: [rules.rewrite(t) for t in ts])
        print(f"terms_vs_rules {n_rules:>5} rules: {seconds * 1e3:9.1f} ms for {n_terms} terms")
    rules = six_rules()
    for n in [10_000, 100_000, 1_000_000]:
        if n > max_tasks:
            break
        dsk = random_dag(n, 42)
        repeats = 3 if n < 1_000_000 else 1
        out = {}

        def run():
            out.clear()
            out.update((k, rules.rewrite(v)) for k, v in dsk.items())

        seconds = best_of(repeats, run)
        changed = sum(1 for k in dsk if out[k] != dsk[k])
        print(f"graph {n:>9} tasks: {seconds:8.3f} s ({changed} changed)")


if __name__ == "__main__":
    main()
