//! Rules files: `{"rules": [{"lhs": TERM, "rhs": TERM}, ...]}` with
//! `{"var": NAME}` variables, and errors that say which rule and what is
//! wrong.

use expect_test::{Expect, expect};
use graph_core::Term;
use graph_rewrite::{RewriteStrategy, rules_file};

#[test]
fn reads_every_term_form() {
    let text = r#"{"description": "ignored", "rules": [
        {"lhs": {"call": "add", "args": [{"var": "x"}, 0]}, "rhs": {"var": "x"}},
        {"rhs": {"call": "add", "args": [{"var": "x"}, {"var": "x"}]},
         "lhs": {"call": "mul", "args": [{"var": "x"}, 2]}},
        {"lhs": {"list": [{"ref": ["y", 0]}, null, true, 1.5, "s"]}, "rhs": {"ref": "z"}}
    ]}"#;
    let rules = rules_file::from_slice(text.as_bytes()).unwrap();
    let listed: Vec<String> = rules.rules().iter().map(ToString::to_string).collect();
    expect![[r#"
        add(?x, 0) -> ?x
        mul(?x, 2) -> add(?x, ?x)
        [('y', 0), None, True, 1.5, 's'] -> z"#]]
    .assert_eq(&listed.join("\n"));
    let term = Term::call(
        "mul",
        [
            Term::call("add", [Term::key("a"), Term::lit(0)]),
            Term::lit(2),
        ],
    );
    assert_eq!(
        rules.rewrite(&term, RewriteStrategy::BottomUp).to_string(),
        "add(a, a)"
    );
}

fn check_err(text: &str, expected: Expect) {
    let err = rules_file::from_slice(text.as_bytes()).unwrap_err();
    expected.assert_eq(&err.to_string());
}

#[test]
fn errors_name_the_rule_and_the_problem() {
    check_err(
        "{\"rules\": [",
        expect!["line 1, column 11: EOF while parsing a list"],
    );
    check_err("[]", expect!["document: expected a JSON object"]);
    check_err("{}", expect!["document: missing field `rules`"]);
    check_err(
        r#"{"rules": {}}"#,
        expect!["rules: expected an array of rules"],
    );
    check_err(
        r#"{"rules": [1]}"#,
        expect!["rules[0]: expected a JSON object"],
    );
    check_err(
        r#"{"rules": [{"lhs": 1}]}"#,
        expect!["rules[0]: missing field `rhs`"],
    );
    check_err(
        r#"{"rules": [{"lhs": 1, "rhs": 2, "name": "x"}]}"#,
        expect!["rules[0]: unknown field `name`"],
    );
    check_err(
        r#"{"rules": [{"lhs": 1, "rhs": 1}, {"lhs": {"call": "f", "args": [{"var": "x"}, [1]]}, "rhs": 0}]}"#,
        expect![[
            r#"rules[1].lhs.args[1]: expected a term (a bare array is not a term: write a list as {"list": [TERM, ...]})"#
        ]],
    );
    check_err(
        r#"{"rules": [{"lhs": {"call": "f"}, "rhs": 0}]}"#,
        expect!["rules[0].lhs: missing field `args`"],
    );
    check_err(
        r#"{"rules": [{"lhs": {"call": 3, "args": []}, "rhs": 0}]}"#,
        expect!["rules[0].lhs.call: expected an op name (a string)"],
    );
    check_err(
        r#"{"rules": [{"lhs": {"var": "x", "ref": "y"}, "rhs": 0}]}"#,
        expect![[
            r#"rules[0].lhs: a term object is {"var": NAME}, {"ref": KEY}, {"call": OP, "args": [TERM, ...]} or {"list": [TERM, ...]}"#
        ]],
    );
    check_err(
        r#"{"rules": [{"lhs": {"list": [{"variable": "x"}]}, "rhs": 0}]}"#,
        expect!["rules[0].lhs.list[0]: unknown field `variable`"],
    );
    check_err(
        r#"{"rules": [{"lhs": {"ref": {"a": 1}}, "rhs": 0}]}"#,
        expect![
            "rules[0].lhs.ref: bad key: invalid type: map, expected a key: a string, a number, or an array of those"
        ],
    );
    check_err(
        r#"{"rules": [{"lhs": 18446744073709551615, "rhs": 0}]}"#,
        expect!["rules[0].lhs: integer does not fit in a signed 64-bit integer"],
    );
    check_err(
        r#"{"rules": [{"lhs": {"call": "f", "args": [18446744073709551616]}, "rhs": 0}]}"#,
        expect![
            "line 1, column 62: integer 18446744073709551616 does not fit in a signed 64-bit integer"
        ],
    );
    check_err(
        r#"{"rules": [{"lhs": {"call": "f", "args": [{"var": "x"}]}, "rhs": {"var": "y"}}]}"#,
        expect![
            "rules[0]: variable `y` appears in the right-hand side but not in the left-hand side `f(?x)`"
        ],
    );
}

#[test]
fn read_path_names_the_file() {
    let err = rules_file::read_path("/nonexistent/rules.json").unwrap_err();
    assert!(
        err.to_string().starts_with("/nonexistent/rules.json: "),
        "{err}"
    );
}
