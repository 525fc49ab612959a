//! A worker's spilled results: one that cannot be read back stops the run
//! with an error naming the task, the input and the file, not a task that
//! finds its input missing.

use std::sync::Arc;

use graph_core::{Dag, NodeId, TaskGraph, Term, Topology};
use graph_distributed::{Cluster, Error, Job, Run, Runner};
use graph_exec::TaskFailure;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};

/// A result whose bytes on disk never read back.
#[derive(Clone, Debug, Serialize)]
struct Damaged(Vec<u8>);

impl<'de> Deserialize<'de> for Damaged {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Damaged, D::Error> {
        Err(D::Error::custom("the bytes on disk are damaged"))
    }
}

/// Each task: 1 000 bytes, after reading every input.
struct Gather<'g>(&'g Topology);

impl Runner for Gather<'_> {
    type Value = Damaged;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<Damaged>,
    ) -> Result<Damaged, TaskFailure> {
        for &dep in self.0.dependencies(node) {
            input(dep).ok_or_else(|| TaskFailure::new("gather", "an input is missing"))?;
        }
        Ok(Damaged(vec![0; 1_000]))
    }

    fn bytes(&self, _: NodeId, value: &Damaged) -> u64 {
        value.0.len() as u64
    }
}

#[test]
fn a_result_that_cannot_be_read_back_is_named_with_its_file() {
    // Six roots of 1 000 bytes, then a task reading each, in that order,
    // under a limit of 2 500: the first roots spill before they are read.
    let mut builder = TaskGraph::builder();
    for i in 0..6 {
        builder = builder.task(format!("root-{i}"), Term::lit(i));
    }
    for i in 0..6 {
        builder = builder.task(
            format!("use-{i}"),
            Term::list([Term::key(format!("root-{i}"))]),
        );
    }
    let graph = Arc::new(builder.build().unwrap());
    let uses = (6..12).map(NodeId::new);
    let job = Job::new(uses, vec![0; graph.len()]).with_memory_limit(2_500);
    let err = Run::new(graph, job, &Cluster::local(1), |graph, _| {
        Ok(Box::new(Gather(graph.topology()?)))
    })
    .run()
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::ReadBack { .. }), "{text}");
    assert!(text.starts_with("task 'use-"), "{text}");
    assert!(text.contains("on worker 0: its input 'root-"), "{text}");
    assert!(text.contains("taskgraph-spill-"), "{text}");
    assert!(text.ends_with("the bytes on disk are damaged"), "{text}");
}
