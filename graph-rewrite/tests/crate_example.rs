//! The crate-level example: the two rules of dask's rewrite documentation,
//! applied to a term and to a graph. Run as a doctest of `lib.rs`.

use graph_core::{Key, TaskGraph, Term};
use graph_rewrite::{Pattern, RewriteRule, RewriteStrategy, RuleSet, rewrite_graph};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = || Pattern::var("a");
    let rules = RuleSet::new([
        // add(a, a) -> mul(a, 2)
        RewriteRule::new(
            Pattern::call("add", [a(), a()]),
            Pattern::call("mul", [a(), Pattern::lit(2)]),
        )?,
        // mul(a, a) -> pow(a, 2)
        RewriteRule::new(
            Pattern::call("mul", [a(), a()]),
            Pattern::call("pow", [a(), Pattern::lit(2)]),
        )?,
    ]);

    let add33 = || Term::call("add", [Term::lit(3), Term::lit(3)]);
    let term = Term::call("mul", [add33(), add33()]);
    assert_eq!(
        rules.rewrite(&term, RewriteStrategy::BottomUp).to_string(),
        "pow(mul(3, 2), 2)"
    );

    // Every task of a graph, in parallel; references are terms like any other.
    let graph = TaskGraph::builder()
        .task("x", Term::lit(5))
        .task("y", Term::call("add", [Term::key("x"), Term::key("x")]))
        .build()?;
    let (rewritten, report) =
        graph_rewrite::par_rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp)?;
    assert_eq!(report.changed, 1);
    let y = rewritten.get(&Key::from("y")).unwrap().body.term().unwrap();
    assert_eq!(y.to_string(), "mul(x, 2)");
    assert_eq!(
        rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp)?.0,
        rewritten
    );
    Ok(())
}
