//! A run that goes on across lost processes without a supervisor
//! ([`Run::recover`]): each process runs its share, keeping its leftovers
//! ([`Run::run_keeping`]); on a loss the survivors [`regroup`],
//! telling each other what they ran, heard and hold; each makes the same
//! plan ([`plan_recovery`]) and feeds what it holds into the next attempt
//! ([`Run::attempt`]), until the run ends or it has lost more processes
//! than allowed.

use std::sync::Arc;

use graph_core::{NodeId, TaskGraph};

use crate::recovery::{Holdings, Losses, Recovery, plan_recovery, regroup};
use crate::run::{Attempt, Leftovers, Outcome, Stopped};
use crate::{Cluster, Error, Job, Run};

/// What a process of [`Run::recover`] goes through, as it happens.
#[derive(Debug)]
#[non_exhaustive]
pub enum Recovering<'a> {
    /// Attempt `attempt` stopped for the loss of another process: this one
    /// regroups with the survivors.
    Stopped {
        /// The attempt that stopped, from 1.
        attempt: usize,
        /// Why it stopped.
        error: &'a Error,
    },
    /// The survivors agreed on the next attempt.
    Regrouped {
        /// The next attempt.
        attempt: usize,
        /// Who goes on, by their numbers in the first attempt.
        survivors: &'a [usize],
        /// Who was lost, by the same numbers.
        lost: &'a [usize],
        /// How many tasks the lost processes had run, as far as the
        /// survivors heard (every 50 ms at most, each process tells the
        /// others what it has run).
        lost_ran: usize,
        /// This process's number in the next attempt.
        process: usize,
    },
    /// The plan of the next attempt, the same on every survivor.
    Planned {
        /// The next attempt.
        attempt: usize,
        /// The tasks it runs.
        run: usize,
        /// How many of them had run before.
        recomputed: usize,
        /// The results it takes from the survivors.
        fetched: usize,
    },
}

/// How a [`Run::recover`] ended.
#[derive(Debug)]
pub struct Recovered<V> {
    /// As [`Run::run`]'s: at process 0 of the last attempt, the
    /// outputs.
    pub outcome: Option<Outcome<V>>,
    /// The attempts made, from 1 (no loss).
    pub attempts: usize,
    /// The processes lost, by their numbers in the first attempt, in the
    /// order they were lost.
    pub lost_processes: Vec<usize>,
    /// The tasks run again that had run before, over all attempts.
    pub recomputed_tasks: usize,
    /// The last attempt's cluster.
    pub cluster: Cluster,
}

impl<V: timely::ExchangeData + Clone> Run<V> {
    /// Runs it, going on when other processes are lost, up to `retries` of
    /// them, among the survivors, with the results of a run without the
    /// fault: every process of the cluster calls it alike. `on` hears each
    /// step ([`Recovering`]), to tell the user.
    ///
    /// Each attempt keeps its leftovers ([`Run::run_keeping`]); only
    /// the tasks still needed whose results no survivor holds run again;
    /// the survivors go on when they are a majority (see [`regroup`]).
    ///
    /// # Errors
    ///
    /// As [`Run::run`], for a failure that is not a loss;
    /// [`Error::TooManyLosses`] past `retries`; as [`regroup`] when the
    /// survivors cannot go on.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use graph_distributed::recovery::Recovering;
    /// use graph_distributed::{Cluster, Job, Run};
    /// # use graph_core::NodeId;
    /// # use graph_distributed::{Runner, RunnerError};
    /// # use graph_exec::TaskFailure;
    /// # struct One;
    /// # impl Runner for One {
    /// #     type Value = u64;
    /// #     fn run(&mut self, _: NodeId, _: &mut dyn FnMut(NodeId) -> Option<u64>) -> Result<u64, TaskFailure> {
    /// #         Ok(1)
    /// #     }
    /// # }
    /// # fn make(_: &graph_core::TaskGraph, _: usize) -> Result<Box<dyn Runner<Value = u64> + '_>, RunnerError> {
    /// #     Ok(Box::new(One))
    /// # }
    /// # let graph = Arc::new(graph_core::generate::random_dag(10, 1));
    /// # let job = Job::new([], vec![0; 10]);
    /// let cluster = Cluster::from_hostfile("hosts".as_ref(), 1, 2)?.with_secret("a secret of 16 bytes+")?;
    /// let recovered = Run::new(graph, job, &cluster, make).recover(2, |step| {
    ///     if let Recovering::Regrouped { survivors, lost, .. } = step {
    ///         eprintln!("going on with {survivors:?} without {lost:?}");
    ///     }
    /// })?;
    /// println!("{} attempts, {} tasks run again", recovered.attempts, recovered.recomputed_tasks);
    /// # Ok::<(), graph_distributed::Error>(())
    /// ```
    pub fn recover(
        self,
        retries: usize,
        mut on: impl FnMut(Recovering<'_>),
    ) -> Result<Recovered<V>, Error> {
        let Run {
            prepared,
            mut job,
            mut cluster,
            make_runner,
            mut attempt,
        } = self;
        let graph = Arc::clone(prepared.graph());
        let mut attempts = 1;
        let mut first_numbers: Vec<usize> = (0..cluster.processes()).collect();
        let mut losses = Losses::new(retries);
        let mut recomputed_tasks = 0;
        loop {
            let result = Run {
                prepared: prepared.clone(),
                job: job.clone(),
                cluster: cluster.clone(),
                make_runner: Arc::clone(&make_runner),
                attempt: attempt.take(),
            }
            .run_keeping();
            let Stopped { error, leftovers } = match result {
                Ok(outcome) => {
                    return Ok(Recovered {
                        outcome,
                        attempts,
                        lost_processes: losses.lost().to_vec(),
                        recomputed_tasks,
                        cluster,
                    });
                }
                Err(stopped) => stopped,
            };
            let Some(mut leftovers) = leftovers else {
                return Err(error);
            };
            let Some(watch) = leftovers.take_watch() else {
                return Err(error);
            };
            on(Recovering::Stopped {
                attempt: attempts,
                error: &error,
            });
            let me = cluster.process();
            let heard: Vec<(usize, Vec<NodeId>)> = (0..cluster.processes())
                .filter(|&p| p != me)
                .map(|p| (p, watch.heard(p)))
                .collect();
            let report = Report::of(&leftovers, heard).encode();
            let regrouped = regroup(&cluster, &watch, attempts as u32, &report)?;
            drop(watch);
            let reports = (regrouped.survivors.iter())
                .zip(&regrouped.reports)
                .map(|(&process, bytes)| {
                    Report::decode(bytes, graph.len(), cluster.processes(), process)
                })
                .collect::<Result<Vec<_>, Error>>()?;
            let lost: Vec<usize> = regrouped.lost.iter().map(|&p| first_numbers[p]).collect();
            losses.lose(lost.iter().copied())?;
            first_numbers = regrouped
                .survivors
                .iter()
                .map(|&p| first_numbers[p])
                .collect();
            attempts += 1;
            on(Recovering::Regrouped {
                attempt: attempts,
                survivors: &first_numbers,
                lost: &lost,
                lost_ran: lost_ran(&reports, &regrouped.lost),
                process: regrouped.cluster.process(),
            });
            let mut holdings = Holdings::new(graph.len());
            for (&process, report) in regrouped.survivors.iter().zip(&reports) {
                let heard = report.heard.iter().flat_map(|(_, ran)| ran);
                for &node in report.finished.iter().chain(heard) {
                    holdings.finished(node);
                }
                for &node in &report.held {
                    holdings.hold(node, process as u32);
                }
            }
            let next = next_attempt(
                &graph,
                job,
                &cluster,
                &regrouped.lost,
                &holdings,
                *leftovers,
            )?;
            on(Recovering::Planned {
                attempt: attempts,
                run: next.plan.run.len(),
                recomputed: next.plan.recomputed,
                fetched: next.plan.fetch.len(),
            });
            recomputed_tasks += next.plan.recomputed;
            job = next.job;
            attempt = Some(next.attempt);
            cluster = regrouped.cluster;
        }
    }
}

/// The next attempt after the loss of `lost` (numbers in `cluster`'s
/// attempt, which stopped), from this process's side.
#[derive(Debug)]
pub struct NextAttempt<V> {
    /// The plan: the same on every survivor given the same holdings.
    pub plan: Recovery,
    /// The attempt's job: the stopped one's, placed afresh over the
    /// survivors.
    pub job: Job,
    /// What this process brings: the plan's tasks, and the results it
    /// feeds in.
    pub attempt: Attempt<V>,
}

/// Plans the next attempt after the loss of `lost` from what the survivors
/// hold (`holdings`; result sizes are the graph's, 1 where it says none),
/// for `job`, stopped on `cluster`; this process brings from its
/// `leftovers` the results the plan fetches from it. Every survivor calls
/// it alike, with a supervisor or after [`regroup`].
///
/// # Errors
///
/// As [`plan_recovery`].
pub fn next_attempt<V>(
    graph: &TaskGraph,
    job: Job,
    cluster: &Cluster,
    lost: &[usize],
    holdings: &Holdings,
    leftovers: Leftovers<V>,
) -> Result<NextAttempt<V>, Error> {
    let sizes: Vec<u64> = graph
        .iter()
        .map(|(_, task)| task.size.unwrap_or(1))
        .collect();
    let threads = cluster.threads();
    let plan = plan_recovery(
        graph,
        &job,
        cluster.processes(),
        threads,
        lost,
        holdings,
        Some(&sizes),
    )?;
    let fed = leftovers.into_fed(&plan, cluster.process() as u32);
    Ok(NextAttempt {
        job: job.with_placement(plan.attempt_placement(threads)),
        attempt: Attempt::new(&plan, fed),
        plan,
    })
}

/// How many distinct tasks the processes `lost` had run, as the survivors
/// heard.
fn lost_ran(reports: &[Report], lost: &[usize]) -> usize {
    let mut ran: Vec<NodeId> = reports
        .iter()
        .flat_map(|report| &report.heard)
        .filter(|(process, _)| lost.contains(process))
        .flat_map(|(_, ran)| ran.iter().copied())
        .collect();
    ran.sort_unstable();
    ran.dedup();
    ran.len()
}

/// What a survivor tells the others when it regroups.
#[derive(Debug, PartialEq, Eq)]
struct Report {
    /// The tasks it ran, and those whose results it received.
    finished: Vec<NodeId>,
    /// The results it holds.
    held: Vec<NodeId>,
    /// Per other process of the attempt, the tasks it said it ran.
    heard: Vec<(usize, Vec<NodeId>)>,
}

impl Report {
    fn of<V>(leftovers: &Leftovers<V>, heard: Vec<(usize, Vec<NodeId>)>) -> Report {
        Report {
            finished: leftovers.finished().to_vec(),
            held: leftovers.held().iter().map(|(node, _)| *node).collect(),
            heard,
        }
    }

    /// Counts and numbers, each a little-endian `u32`.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let nodes = |nodes: &[NodeId], out: &mut Vec<u8>| {
            out.extend_from_slice(&(nodes.len() as u32).to_le_bytes());
            for node in nodes {
                out.extend_from_slice(&node.as_u32().to_le_bytes());
            }
        };
        nodes(&self.finished, &mut out);
        nodes(&self.held, &mut out);
        out.extend_from_slice(&(self.heard.len() as u32).to_le_bytes());
        for (process, ran) in &self.heard {
            out.extend_from_slice(&(*process as u32).to_le_bytes());
            nodes(ran, &mut out);
        }
        out
    }

    /// The report of process `from` of an attempt of `processes`
    /// processes, on a graph of `tasks` tasks.
    fn decode(bytes: &[u8], tasks: usize, processes: usize, from: usize) -> Result<Report, Error> {
        Report::read(&mut Words(bytes), tasks, processes).ok_or_else(|| {
            Error::from(graph_transport::Error::Regroup {
                problem: graph_transport::RegroupProblem::Report { process: from },
            })
        })
    }

    /// A report from `words`, which it takes to their end; `None` when it
    /// cannot be one.
    fn read(words: &mut Words<'_>, tasks: usize, processes: usize) -> Option<Report> {
        let finished = words.nodes(tasks)?;
        let held = words.nodes(tasks)?;
        let count = words.below(processes + 1)?;
        let heard = (0..count)
            .map(|_| Some((words.below(processes)?, words.nodes(tasks)?)))
            .collect::<Option<_>>()?;
        words.0.is_empty().then_some(Report {
            finished,
            held,
            heard,
        })
    }
}

/// The little-endian `u32`s of a report still to be read.
struct Words<'a>(&'a [u8]);

impl Words<'_> {
    /// The next word, if it is below `bound`.
    fn below(&mut self, bound: usize) -> Option<usize> {
        let (word, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        let word = u32::from_le_bytes(*word) as usize;
        (word < bound).then_some(word)
    }

    /// A count, then as many task numbers, of a graph of `tasks` tasks.
    fn nodes(&mut self, tasks: usize) -> Option<Vec<NodeId>> {
        let count = self.below(tasks + 1)?;
        (0..count)
            .map(|_| self.below(tasks).map(NodeId::new))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(numbers: &[usize]) -> Vec<NodeId> {
        numbers.iter().map(|&n| NodeId::new(n)).collect()
    }

    #[test]
    fn reports_read_back_as_written() {
        let report = Report {
            finished: nodes(&[0, 3, 9]),
            held: nodes(&[3]),
            heard: vec![(0, nodes(&[1, 2])), (2, Vec::new())],
        };
        let bytes = report.encode();
        assert_eq!(Report::decode(&bytes, 10, 3, 1).unwrap(), report);
    }

    #[test]
    fn reports_out_of_bounds_or_cut_short_are_refused_naming_their_process() {
        let report = Report {
            finished: nodes(&[0, 9]),
            held: Vec::new(),
            heard: vec![(2, nodes(&[1]))],
        };
        let bytes = report.encode();
        for (bytes, tasks, processes) in [
            (&bytes[..bytes.len() - 1], 10, 3),
            (&bytes[..bytes.len() - 4], 10, 3),
            (&bytes[..], 9, 3),
            (&bytes[..], 10, 2),
        ] {
            let err = Report::decode(bytes, tasks, processes, 1).unwrap_err();
            assert_eq!(
                err.to_string(),
                "regrouping after a loss: the report of process 1 cannot be read"
            );
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0; 4]);
        assert!(Report::decode(&longer, 10, 3, 1).is_err());
    }
}
