//! Rules files: `{"rules": [{"lhs": TERM, "rhs": TERM}, ...]}` in the JSON
//! term syntax of `taskgraph-json/1`, where `{"var": "x"}` is a variable.
//!
//! ```json
//! {"rules": [
//!   {"lhs": {"call": "add", "args": [{"var": "x"}, 0]}, "rhs": {"var": "x"}},
//!   {"lhs": {"call": "mul", "args": [{"var": "x"}, 2]},
//!    "rhs": {"call": "add", "args": [{"var": "x"}, {"var": "x"}]}}
//! ]}
//! ```
//!
//! A TERM is a JSON scalar (a literal), `{"var": NAME}`, `{"ref": KEY}`,
//! `{"call": "op", "args": [TERM, ...]}` or `{"list": [TERM, ...]}`. Other
//! top-level fields are ignored, so a file may carry a description; a rule has
//! exactly `lhs` and `rhs`.

use std::path::Path;

use graph_core::{Key, OpInterner, Value};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::error::RulesProblem;
use crate::{Error, Pattern, RewriteRule, RuleSet};

/// Reads a rules file, or standard input when `path` is `-`.
///
/// # Errors
///
/// Any error of [`from_slice`], or of reading the file, wrapped in
/// [`Error::In`] so that it names the file.
pub fn read_path(path: impl AsRef<Path>) -> Result<RuleSet, Error> {
    let (origin, bytes) = graph_core::file::read_input(path.as_ref());
    let within = |error: Error| Error::In {
        origin: origin.clone(),
        error: Box::new(error),
    };
    let bytes = bytes.map_err(|err| within(Error::Io(err)))?;
    from_slice(&bytes).map_err(within)
}

/// Reads a rule set from the text of a rules file.
///
/// # Errors
///
/// [`Error::Syntax`] for text that is not JSON (with line and column),
/// [`Error::Invalid`] for JSON that is not a rules file (with the JSON path
/// of the problem, such as `rules[1].lhs.args[0]`), and [`Error::InRule`]
/// around [`Error::UnboundVariable`] for a rule whose right-hand side uses a
/// variable that its left-hand side lacks.
///
/// # Example
///
/// ```
/// use graph_rewrite::rules_file;
///
/// let text = r#"{"rules": [
///     {"lhs": {"call": "add", "args": [{"var": "x"}, 0]}, "rhs": {"var": "x"}}]}"#;
/// let rules = rules_file::from_slice(text.as_bytes())?;
/// assert_eq!(rules.rules()[0].to_string(), "add(?x, 0) -> ?x");
///
/// let bad = r#"{"rules": [{"lhs": {"call": "f", "args": [{"var": 1}]}, "rhs": 0}]}"#;
/// let err = rules_file::from_slice(bad.as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "rules[0].lhs.args[0].var: expected a variable name (a string)");
/// # Ok::<(), graph_rewrite::Error>(())
/// ```
pub fn from_slice(bytes: &[u8]) -> Result<RuleSet, Error> {
    let document: Json = serde_json::from_slice(bytes).map_err(|err| {
        let (line, column) = (err.line(), err.column());
        let suffix = format!(" at line {line} column {column}");
        let text = err.to_string();
        let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
        Error::Syntax {
            line,
            column,
            message,
        }
    })?;
    let rules = Reader::default().rules(&document)?;
    // serde's reader takes an integer past u64 for a float (one within u64
    // but past i64 the reader above refuses, naming the rule).
    if let Err(graph_core::json::Error::Invalid {
        line,
        column,
        problem,
        ..
    }) = graph_core::json::check_integers(bytes)
    {
        return Err(Error::Syntax {
            line,
            column,
            message: problem.to_string(),
        });
    }
    Ok(rules)
}

fn invalid(path: &str, problem: RulesProblem) -> Error {
    Error::Invalid {
        path: path.to_owned(),
        problem,
    }
}

#[derive(Default)]
struct Reader {
    ops: OpInterner,
}

impl Reader {
    fn rules(&mut self, document: &Json) -> Result<RuleSet, Error> {
        let Json::Object(fields) = document else {
            return Err(invalid("document", RulesProblem::NotAnObject));
        };
        let Some(rules) = fields.get("rules") else {
            return Err(invalid(
                "document",
                RulesProblem::MissingField { field: "rules" },
            ));
        };
        let Json::Array(rules) = rules else {
            return Err(invalid(
                "rules",
                RulesProblem::Expected {
                    expected: "an array of rules",
                },
            ));
        };
        let mut out = Vec::with_capacity(rules.len());
        for (index, rule) in rules.iter().enumerate() {
            let path = format!("rules[{index}]");
            let Json::Object(fields) = rule else {
                return Err(invalid(&path, RulesProblem::NotAnObject));
            };
            if let Some(field) = fields
                .keys()
                .find(|field| *field != "lhs" && *field != "rhs")
            {
                return Err(invalid(
                    &path,
                    RulesProblem::UnknownField {
                        field: field.clone(),
                    },
                ));
            }
            let mut side = |field: &'static str| match fields.get(field) {
                Some(term) => self.pattern(term, &mut format!("{path}.{field}")),
                None => Err(invalid(&path, RulesProblem::MissingField { field })),
            };
            let lhs = side("lhs")?;
            let rhs = side("rhs")?;
            let rule = RewriteRule::new(lhs, rhs).map_err(|error| Error::InRule {
                index,
                error: Box::new(error),
            })?;
            out.push(rule);
        }
        Ok(RuleSet::new(out))
    }

    /// Reads a pattern; `path` is where it is, extended in place while
    /// reading its parts.
    fn pattern(&mut self, json: &Json, path: &mut String) -> Result<Pattern, Error> {
        Ok(match json {
            Json::Null => Pattern::Lit(Value::Null),
            Json::Bool(b) => Pattern::Lit(Value::Bool(*b)),
            Json::Number(number) => Pattern::Lit(match (number.as_i64(), number.as_f64()) {
                (Some(i), _) => Value::Int(i),
                (None, _) if number.is_u64() => {
                    return Err(invalid(path, RulesProblem::IntegerOutOfRange));
                }
                (None, Some(x)) => Value::Float(x),
                (None, None) => return Err(invalid(path, RulesProblem::IntegerOutOfRange)),
            }),
            Json::String(s) => Pattern::Lit(Value::from(s.as_str())),
            Json::Array(_) => {
                return Err(invalid(
                    path,
                    RulesProblem::Expected {
                        expected: "a term (a bare array is not a term: write a list as {\"list\": [TERM, ...]})",
                    },
                ));
            }
            Json::Object(fields) => {
                let get = |field| fields.get(field);
                let form = |fields_of_form: &[&str]| {
                    fields.len() == fields_of_form.len()
                        && fields_of_form.iter().all(|f| fields.contains_key(*f))
                };
                if let Some(field) = fields
                    .keys()
                    .find(|field| !["var", "ref", "call", "args", "list"].contains(&field.as_str()))
                {
                    return Err(invalid(
                        path,
                        RulesProblem::UnknownField {
                            field: field.clone(),
                        },
                    ));
                }
                if form(&["var"]) {
                    match get("var") {
                        Some(Json::String(name)) => Pattern::var(name),
                        _ => {
                            path.push_str(".var");
                            return Err(invalid(
                                path,
                                RulesProblem::Expected {
                                    expected: "a variable name (a string)",
                                },
                            ));
                        }
                    }
                } else if form(&["ref"]) {
                    let key = get("ref").cloned().unwrap_or(Json::Null);
                    match Key::deserialize(key) {
                        Ok(key) => Pattern::Ref(key),
                        Err(err) => {
                            path.push_str(".ref");
                            return Err(invalid(
                                path,
                                RulesProblem::BadKey {
                                    message: err.to_string(),
                                },
                            ));
                        }
                    }
                } else if form(&["call", "args"]) {
                    let Some(Json::String(op)) = get("call") else {
                        path.push_str(".call");
                        return Err(invalid(
                            path,
                            RulesProblem::Expected {
                                expected: "an op name (a string)",
                            },
                        ));
                    };
                    let op = self.ops.intern(op);
                    let args = self.patterns(get("args"), path, ".args")?;
                    Pattern::Call { op, args }
                } else if form(&["call"]) {
                    return Err(invalid(path, RulesProblem::MissingField { field: "args" }));
                } else if form(&["list"]) {
                    Pattern::List(self.patterns(get("list"), path, ".list")?)
                } else {
                    return Err(invalid(path, RulesProblem::BadTerm));
                }
            }
        })
    }

    fn patterns(
        &mut self,
        json: Option<&Json>,
        path: &mut String,
        field: &str,
    ) -> Result<Vec<Pattern>, Error> {
        let base = path.len();
        path.push_str(field);
        let Some(Json::Array(items)) = json else {
            return Err(invalid(
                path,
                RulesProblem::Expected {
                    expected: "an array of terms",
                },
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            out.push(self.pattern(item, path)?);
            path.truncate(len);
        }
        path.truncate(base);
        Ok(out)
    }
}
