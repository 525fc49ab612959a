//! What the job fingerprint covers.

use graph_core::{NodeId, TaskGraph, Term};

use super::graph_digest;
use crate::Job;

/// The fingerprint of `job` on `graph`, as a run makes it.
fn fingerprint(job: &Job, graph: &TaskGraph) -> [u8; 32] {
    super::fingerprint(job, &graph_digest(graph))
}

fn graph(literal: i64, op: &str) -> TaskGraph {
    TaskGraph::builder()
        .task(("x", 0), Term::lit(literal))
        .task("y", Term::call(op, [Term::key(("x", 0)), Term::lit("a")]))
        .build()
        .unwrap()
}

#[test]
fn bodies_keys_and_the_job_all_count() {
    let job = Job::new([NodeId::new(1)], vec![0, 1]);
    let base = fingerprint(&job, &graph(1, "add"));
    assert_eq!(base, fingerprint(&job.clone(), &graph(1, "add")));
    assert_ne!(base, fingerprint(&job, &graph(2, "add")), "a literal");
    assert_ne!(base, fingerprint(&job, &graph(1, "sub")), "an op");
    let renamed = TaskGraph::builder()
        .task(("x", 1), Term::lit(1))
        .task(
            "y",
            Term::call("add", [Term::key(("x", 1)), Term::lit("a")]),
        )
        .build()
        .unwrap();
    assert_ne!(base, fingerprint(&job, &renamed), "a key");
    let others = [
        Job::new([NodeId::new(0)], vec![0, 1]),
        Job::new([NodeId::new(1)], vec![1, 1]),
        job.clone().with_priorities(vec![1, 0]),
    ];
    for other in others {
        assert_ne!(base, fingerprint(&other, &graph(1, "add")), "{other:?}");
    }
}

#[test]
fn an_int_and_a_string_of_its_digits_differ() {
    let job = Job::new([NodeId::new(0)], vec![0]);
    let int = TaskGraph::builder()
        .task("x", Term::lit(1))
        .build()
        .unwrap();
    let text = TaskGraph::builder()
        .task("x", Term::lit("1"))
        .build()
        .unwrap();
    assert_ne!(fingerprint(&job, &int), fingerprint(&job, &text));
}

/// Three inputs and a task that reads some of them: whichever way its
/// references are written (by index where no key repeats, by key where one
/// does), naming another task, repeating one, or swapping two changes the
/// digest.
#[test]
fn which_tasks_a_body_reads_counts() {
    let reader = |args: Vec<Term>| {
        TaskGraph::builder()
            .task("a", Term::lit(1))
            .task("b", Term::lit(1))
            .task("c", Term::lit(1))
            .task("d", Term::call("add", args))
            .build()
            .unwrap()
    };
    let job = Job::new([NodeId::new(3)], vec![0, 1, 0, 1]);
    let digest = |args: &[&str]| {
        let args = args.iter().map(|&key| Term::key(key)).collect();
        fingerprint(&job, &reader(args))
    };
    let bodies = [
        vec!["a", "b"],
        vec!["b", "a"],
        vec!["a", "c"],
        vec!["a", "a"],
        vec!["a", "b", "a"],
        vec!["a", "b", "b"],
        vec!["a", "b", "c"],
    ];
    let digests: Vec<_> = bodies.iter().map(|body| digest(body)).collect();
    for (i, first) in digests.iter().enumerate() {
        assert_eq!(*first, digest(&bodies[i]), "{:?} twice", bodies[i]);
        for (j, second) in digests.iter().enumerate().skip(i + 1) {
            assert_ne!(first, second, "{:?} and {:?}", bodies[i], bodies[j]);
        }
    }
    // A reference inside a nested list, and the same key as a literal
    // string, differ too.
    let nested = fingerprint(
        &job,
        &reader(vec![Term::list([Term::key("a")]), Term::key("b")]),
    );
    let literal = fingerprint(&job, &reader(vec![Term::lit("a"), Term::key("b")]));
    assert!(!digests.contains(&nested) && !digests.contains(&literal));
    assert_ne!(nested, literal);
}
