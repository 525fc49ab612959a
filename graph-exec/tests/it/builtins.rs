//! The built-in ops mean what their Python namesakes mean.

use graph_core::{TaskGraph, Term, generate};
use graph_exec::{Dynamic, OpRegistry, Request, execute_sequential};

fn eval(term: Term) -> Result<String, String> {
    let graph = TaskGraph::builder().task("x", term).build().unwrap();
    execute_sequential(
        &graph,
        &OpRegistry::<Dynamic>::builtins(),
        &Request::from("x"),
    )
    .map(|run| run.output.value().unwrap().to_string())
    .map_err(|err| err.to_string())
}

fn call(op: &str, args: impl IntoIterator<Item = Term>) -> Term {
    Term::call(op, args)
}

#[test]
fn numbers() {
    let l = |i: i64| Term::lit(i);
    assert_eq!(eval(call("inc", [l(41)])), Ok("42".into()));
    assert_eq!(eval(call("dec", [Term::lit(1.5)])), Ok("0.5".into()));
    assert_eq!(eval(call("add", [l(2), Term::lit(0.5)])), Ok("2.5".into()));
    assert_eq!(eval(call("sub", [l(2), l(5)])), Ok("-3".into()));
    assert_eq!(eval(call("mul", [l(6), l(7)])), Ok("42".into()));
    assert_eq!(eval(call("div", [l(7), l(2)])), Ok("3.5".into()));
    assert_eq!(eval(call("neg", [l(3)])), Ok("-3".into()));
    assert_eq!(eval(call("exp", [l(0)])), Ok("1.0".into()));
    assert_eq!(eval(call("log", [l(1)])), Ok("0.0".into()));
    assert_eq!(
        eval(call("sum", [Term::list([l(1), l(2), l(3)])])),
        Ok("6".into())
    );
    assert_eq!(eval(call("sum", [l(1), l(2)])), Ok("3".into()));
    assert_eq!(
        eval(call("max", [Term::list([l(1), l(9), l(3)])])),
        Ok("9".into())
    );
    assert_eq!(eval(call("min", [l(4), Term::lit(2.5)])), Ok("2.5".into()));
    assert_eq!(
        eval(call("add", [l(i64::MAX), l(1)])),
        Err("task 'x' failed in op `add`: integer overflow".into())
    );
    assert_eq!(
        eval(call("log", [l(0)])),
        Err("task 'x' failed in op `log`: math domain error".into())
    );
    assert_eq!(
        eval(call("max", [Term::list([])])),
        Err("task 'x' failed in op `max`: max() arg is an empty sequence".into())
    );
    assert_eq!(
        eval(call("add", [l(1), Term::lit("a")])),
        Err("task 'x' failed in op `add`: unsupported operand types for +: 'int' and 'str'".into())
    );
    assert_eq!(
        eval(call("inc", [])),
        Err("task 'x' failed in op `inc`: inc() takes 1 argument, got 0".into())
    );
}

#[test]
fn lists_and_strings() {
    let s = |text: &str| Term::lit(text);
    let l = |i: i64| Term::lit(i);
    assert_eq!(eval(call("list", [l(1), s("a")])), Ok("[1, 'a']".into()));
    assert_eq!(
        eval(call("len", [Term::list([l(1), l(2)])])),
        Ok("2".into())
    );
    assert_eq!(eval(call("len", [s("héllo")])), Ok("5".into()));
    assert_eq!(
        eval(call("getitem", [Term::list([l(1), l(2)]), l(-1)])),
        Ok("2".into())
    );
    assert_eq!(
        eval(call("getitem", [Term::list([l(1)]), l(5)])),
        Err("task 'x' failed in op `getitem`: list index out of range".into())
    );
    assert_eq!(
        eval(call(
            "concat",
            [Term::list([l(1)]), Term::list([l(2), l(3)])]
        )),
        Ok("[1, 2, 3]".into())
    );
    assert_eq!(
        eval(call("split", [s(" a  b c ")])),
        Ok("['a', 'b', 'c']".into())
    );
    assert_eq!(
        eval(call("split", [s("a,b,,c"), s(",")])),
        Ok("['a', 'b', '', 'c']".into())
    );
    assert_eq!(
        eval(call("count", [s("pear apple pear"), s("pear")])),
        Ok("2".into())
    );
    assert_eq!(
        eval(call("count", [Term::list([l(1), l(2), l(1)]), l(1)])),
        Ok("2".into())
    );
    assert_eq!(
        eval(call(
            "format",
            [s("{} + {} = {}"), l(1), Term::lit(1.5), s("x")]
        )),
        Ok("'1 + 1.5 = x'".into())
    );
    assert_eq!(eval(call("upper", [s("abc")])), Ok("'ABC'".into()));
    assert_eq!(eval(call("identity", [Term::lit(true)])), Ok("True".into()));
    assert_eq!(
        eval(call("sleep", [s("x"), Term::lit(0.001)])),
        Ok("'x'".into())
    );
    assert_eq!(
        eval(call("sleep", [s("x"), Term::lit(-1.0)])),
        Err("task 'x' failed in op `sleep`: sleep of -1 s: must be 0 to 3600".into())
    );
}

#[test]
fn the_word_count_graph_counts_words() {
    let graph = generate::word_count();
    let request = Request::list(["print1", "print2", "print3"]);
    let run = execute_sequential(&graph, &OpRegistry::builtins(), &request).unwrap();
    let lines: Vec<String> = run
        .output
        .items()
        .unwrap()
        .iter()
        .map(|o| o.value().unwrap().to_string())
        .collect();
    assert_eq!(
        lines,
        [
            "'word list has 2 occurrences of orange, out of 7 words'",
            "'word list has 2 occurrences of apple, out of 7 words'",
            "'word list has 3 occurrences of pear, out of 7 words'",
        ]
    );
}
