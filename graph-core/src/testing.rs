//! Helpers for the tests and fuzz targets of every crate (the `testing`
//! feature): replaying the inputs a fuzz target kept, and small runnable
//! graphs built from fuzzer bytes.

use crate::{Key, TaskGraph, Term};

/// The inputs a fuzz target keeps in `dir` (seeds, and inputs that once
/// failed), sorted by file name, for the tests that replay them.
///
/// # Errors
///
/// When the directory or a file in it cannot be read.
pub fn fuzz_inputs(dir: &std::path::Path) -> std::io::Result<Vec<(std::path::PathBuf, Vec<u8>)>> {
    let mut paths = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    paths.sort();
    paths
        .into_iter()
        .map(|path| std::fs::read(&path).map(|data| (path, data)))
        .collect()
}

/// A small runnable DAG built from fuzzer bytes: up to 48 tasks, each a
/// literal or a call of `inc`, `neg`, `add`, `sum`, `max` or `identity` (and,
/// when `failing_ops` is set, rarely `fail` or `boom`) on earlier tasks and
/// literals, with nested calls and lists. Keys are `('f', i)`.
///
/// # Errors
///
/// When the bytes run out before the first task (`arbitrary`'s error).
pub fn arbitrary_graph(
    u: &mut arbitrary::Unstructured<'_>,
    failing_ops: bool,
) -> arbitrary::Result<TaskGraph> {
    fn term(
        u: &mut arbitrary::Unstructured<'_>,
        n_before: usize,
        depth: u8,
        failing_ops: bool,
    ) -> arbitrary::Result<Term> {
        let choice = u.int_in_range(0..=9_u8)?;
        Ok(match choice {
            0 | 1 => Term::lit(i64::from(u.int_in_range(-100..=100_i8)?)),
            2..=4 if n_before > 0 => Term::key(("f", u.choose_index(n_before)? as i64)),
            _ if depth == 0 => Term::lit(i64::from(u.int_in_range(0..=9_u8)?)),
            5 => Term::call("inc", [term(u, n_before, depth - 1, failing_ops)?]),
            6 => Term::call(
                "add",
                [
                    term(u, n_before, depth - 1, failing_ops)?,
                    term(u, n_before, depth - 1, failing_ops)?,
                ],
            ),
            7 => {
                let len = u.int_in_range(1..=4_u8)?;
                let items = (0..len)
                    .map(|_| term(u, n_before, depth - 1, failing_ops))
                    .collect::<arbitrary::Result<Vec<_>>>()?;
                let op = *u.choose(&["sum", "max", "identity"])?;
                if op == "identity" {
                    Term::list(items)
                } else {
                    Term::call(op, [Term::list(items)])
                }
            }
            8 if failing_ops && u.ratio(1, 8)? => Term::call(
                *u.choose(&["fail", "boom"])?,
                [term(u, n_before, depth - 1, failing_ops)?],
            ),
            _ => Term::call("neg", [term(u, n_before, depth - 1, failing_ops)?]),
        })
    }
    let n_tasks = u.int_in_range(1..=48_usize)?;
    let mut graph = TaskGraph::with_capacity(n_tasks);
    for i in 0..n_tasks {
        let body = term(u, i, 3, failing_ops)?;
        graph
            .insert(Key::from(("f", i as i64)), body)
            .expect("generated keys are distinct");
    }
    Ok(graph)
}
