//! Bytes: what results are expected to take, what is held in memory,
//! and what is spilled to stay under a memory limit.

use fixedbitset::FixedBitSet;
use graph_core::{Body, Dag, NodeId, TaskGraph, Term};
use rustc_hash::FxHashMap;

#[cfg(doc)]
use super::*;
use super::{Overflow, Scheduler};

/// What a scheduler expects of results not yet measured, and what it set
/// aside for the results of the running tasks.
#[derive(Clone, Debug)]
pub(super) struct Sizes<'t> {
    pub(super) expected: &'t [Option<u64>],
    /// Per task, its kind (empty: all of kind 0).
    pub(super) kinds: &'t [u32],
    /// Per kind, the results measured so far and the tasks running.
    pub(super) by_kind: Vec<Kind>,
    /// All results measured so far, for the mean that stands in where a
    /// kind has none and there is no hint.
    pub(super) seen: Kind,
    /// Per task, while it runs (or, run elsewhere, while its result is on
    /// its way here): the bytes reserved for its result.
    pub(super) reserved: Vec<u64>,
    /// Bytes reserved for the results of the running tasks and of those
    /// on their way.
    pub(super) running_bytes: u64,
}

impl Sizes<'_> {
    /// The kind of task `node`.
    pub(super) fn kind(&self, node: NodeId) -> usize {
        self.kinds.get(node.index()).map_or(0, |&k| k as usize)
    }

    /// Records a result of `node` of `bytes`, measured.
    pub(super) fn measured(&mut self, node: NodeId, bytes: u64) {
        self.seen.measured(bytes);
        let kind = self.kind(node);
        self.by_kind[kind].measured(bytes);
    }
}

/// The bookkeeping of [`SchedulerConfig::memory_limit`].
#[derive(Clone, Debug)]
pub(super) struct Memory {
    pub(super) limit: u64,
    /// Per task: its held result is on disk.
    pub(super) spilled: FixedBitSet,
    /// Per task: its result could not be written, and stays in memory.
    pub(super) unspillable: FixedBitSet,
    /// Bytes of the held results that could not be written: counted in
    /// memory, but left out of the limit, which bounds what can be spilled.
    pub(super) unspillable_bytes: u64,
    /// Per task: running tasks that read its result (it stays in memory).
    pub(super) pins: Vec<u32>,
    /// Bytes of results on their way out of this executor, in buffers of
    /// the executor's own ([`Scheduler::sending`]).
    pub(super) sending: u64,
    pub(super) measure_first: bool,
    /// Bytes written to disk over the run.
    pub(super) spilled_bytes: u64,
}

/// Each task's kind for [`SchedulerConfig::kinds`]: the op its task calls
/// (numbered from 1 in the order ops first appear), and 0 for a task that
/// calls none (a literal, a reference, a list, an opaque task).
///
/// ```
/// use graph_core::{TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("a", Term::call("blob", [Term::lit(1_000)]))
///     .task("b", Term::call("checksum", [Term::key("a")]))
///     .task("c", Term::call("blob", [Term::lit(2_000)]))
///     .task("d", Term::lit(7))
///     .build()?;
/// assert_eq!(graph_exec::scheduler::task_kinds(&graph), [1, 2, 1, 0]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn task_kinds(graph: &TaskGraph) -> Vec<u32> {
    let mut ops: FxHashMap<&str, u32> = FxHashMap::default();
    graph
        .iter()
        .map(|(_, task)| match &task.body {
            Body::Term(Term::Call { op, .. }) => {
                let next = ops.len() as u32 + 1;
                *ops.entry(op.as_str()).or_insert(next)
            }
            _ => 0,
        })
        .collect()
}

/// What a [`Sizes`] knows of the results of one kind.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Kind {
    /// Bytes of the results measured.
    pub(super) bytes: u64,
    /// The largest result measured.
    pub(super) largest: u64,
    /// How many results were measured.
    pub(super) count: u64,
    /// How many tasks of the kind run now.
    pub(super) running: u32,
}

impl Kind {
    pub(super) fn mean(&self) -> Option<u64> {
        self.bytes.checked_div(self.count)
    }

    /// The largest result measured, if any was.
    pub(super) fn largest(&self) -> Option<u64> {
        (self.count > 0).then_some(self.largest)
    }

    pub(super) fn measured(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
        self.largest = self.largest.max(bytes);
        self.count += 1;
    }
}

impl<'t> Scheduler<'t> {
    /// The measured bytes of the inputs of `node` that no other task (running
    /// or not) still reads: what it frees when it has run.
    pub(super) fn frees_bytes(&self, node: NodeId) -> u64 {
        if node.index() >= self.n_tasks {
            return 0;
        }
        self.data
            .dependencies(node)
            .iter()
            .filter(|dep| self.readers[dep.index()] == 1)
            .map(|dep| self.bytes[dep.index()])
            .sum()
    }

    /// The bytes `node` adds when it starts: its spilled inputs, read back,
    /// and its expected result.
    pub(super) fn need(&self, node: NodeId) -> u64 {
        let Some(memory) = &self.memory else {
            return 0;
        };
        let mut need = self.expected(node);
        if node.index() < self.n_tasks {
            for dep in self.data.dependencies(node) {
                if memory.spilled.contains(dep.index()) {
                    need += self.bytes[dep.index()];
                }
            }
        }
        need
    }

    /// The bytes `node`'s result is expected to take: the largest result
    /// of its kind measured so far, else its hint, else the mean of all
    /// results measured.
    pub(super) fn expected(&self, node: NodeId) -> u64 {
        let Some(sizes) = &self.sizes else {
            return 0;
        };
        if node.index() >= self.n_tasks {
            return 0;
        }
        let measured = if sizes.kinds.is_empty() {
            None
        } else {
            sizes.by_kind[sizes.kind(node)].largest()
        };
        measured
            .or_else(|| sizes.expected.get(node.index()).copied().flatten())
            .or_else(|| sizes.seen.mean())
            .unwrap_or(0)
    }

    /// Whether `node` can start within the memory limit without spilling.
    pub(super) fn fits(&self, node: NodeId) -> bool {
        let (Some(memory), Some(sizes)) = (&self.memory, &self.sizes) else {
            return true;
        };
        if memory.measure_first && node.index() < self.n_tasks {
            let kind = sizes.by_kind[sizes.kind(node)];
            if kind.count == 0 && kind.running > 0 {
                return false;
            }
        }
        self.limited_bytes() + sizes.running_bytes + memory.sending + self.need(node)
            <= memory.limit
    }

    /// The bytes in memory the limit bounds: the held results but those
    /// that could not be spilled.
    pub(super) fn limited_bytes(&self) -> u64 {
        let unspillable = self.memory.as_ref().map_or(0, |m| m.unspillable_bytes);
        self.held_bytes - unspillable
    }

    /// Records that the result of `node`, computed by another executor, has
    /// arrived and takes `bytes`: the tasks of this executor that wait for
    /// it are one input closer to ready. Under a memory limit, the results
    /// to spill now are pushed onto `spill`.
    ///
    /// # Errors
    ///
    /// [`Overflow`] when the result alone is larger than the memory limit.
    pub fn arrived(
        &mut self,
        node: NodeId,
        bytes: u64,
        spill: &mut Vec<NodeId>,
    ) -> Result<(), Overflow> {
        self.check_arrival(node, bytes)?;
        if let Some(sizes) = &mut self.sizes
            && let Some(reserved) = sizes.reserved.get_mut(node.index())
        {
            sizes.running_bytes -= std::mem::take(reserved);
            sizes.measured(node, bytes);
        }
        self.blocked = false;
        self.hold(node, bytes);
        self.make_ready(node);
        self.keep_within_limit(spill);
        Ok(())
    }

    /// Records that the result of `node`, computed by another executor, is
    /// on its way and will take `bytes` here: under a memory limit they
    /// count, as a running task's result does, from now until
    /// [`Scheduler::arrived`], and the results to spill to make room for
    /// them are pushed onto `spill`. An executor that receives a result in
    /// parts calls this when the first part comes, so that what it buffers
    /// is within the limit too.
    ///
    /// # Errors
    ///
    /// [`Overflow`] when the result alone is larger than the memory limit.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::scheduler::{Scheduler, SchedulerConfig};
    ///
    /// // 0 -> 2 and 1 -> 3, with 1 run elsewhere, under a limit of 12
    /// // bytes: 0's 8 bytes are spilled as soon as 1's 8 bytes start to
    /// // come, and 3 (on 1) then starts before 2 (on 0, on disk).
    /// let topology = Topology::from_edges(4, [(0, 2), (1, 3)])?;
    /// let mine = [true, false, true, true];
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 4], &[0, 1, 2, 3]);
    /// config.mine = Some(&mine);
    /// config.memory_limit = Some(12);
    /// config.expected_bytes = &[Some(8), Some(8), Some(1), Some(1)];
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// assert!(spill.is_empty());
    /// scheduler.incoming(NodeId::new(1), 8, &mut spill).unwrap();
    /// assert_eq!(spill, [NodeId::new(0)]);
    /// scheduler.arrived(NodeId::new(1), 8, &mut spill).unwrap();
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(3))));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn incoming(
        &mut self,
        node: NodeId,
        bytes: u64,
        spill: &mut Vec<NodeId>,
    ) -> Result<(), Overflow> {
        self.check_arrival(node, bytes)?;
        if !self.reads(node) {
            return Ok(());
        }
        if let Some(sizes) = &mut self.sizes
            && let Some(reserved) = sizes.reserved.get_mut(node.index())
        {
            sizes.running_bytes -= std::mem::replace(reserved, bytes);
            sizes.running_bytes += bytes;
        }
        self.keep_within_limit(spill);
        Ok(())
    }

    /// Records that `bytes` of results are on their way out of this
    /// executor, in buffers of its own (encoded for another, say): under a
    /// memory limit they count until they are gone, no task starts that
    /// would not fit beside them, and the results to spill to make room are
    /// pushed onto `spill`. Each call gives the new total; a smaller one
    /// lets waiting tasks start.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::scheduler::{Scheduler, SchedulerConfig};
    ///
    /// // Two tasks of 8 bytes under a limit of 10: while 0's result goes
    /// // out, 1 waits.
    /// let topology = Topology::from_edges(2, [])?;
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 2], &[0, 1]);
    /// config.memory_limit = Some(10);
    /// config.expected_bytes = &[Some(8), Some(8)];
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// scheduler.sending(8, &mut spill);
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(None));
    /// scheduler.sending(0, &mut spill);
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(1))));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn sending(&mut self, bytes: u64, spill: &mut Vec<NodeId>) {
        let Some(memory) = &mut self.memory else {
            return;
        };
        if bytes < memory.sending {
            self.blocked = false;
        }
        memory.sending = bytes;
        self.keep_within_limit(spill);
    }

    /// [`Overflow`] when a result from another executor that a task here
    /// reads is larger than the memory limit on its own.
    pub(super) fn check_arrival(&self, node: NodeId, bytes: u64) -> Result<(), Overflow> {
        match &self.memory {
            Some(memory) if bytes > memory.limit && self.reads(node) => Err(Overflow {
                node,
                bytes,
                limit: memory.limit,
                with_inputs: false,
            }),
            _ => Ok(()),
        }
    }

    /// Counts `node`'s result as held if some task of this executor reads it.
    pub(super) fn hold(&mut self, node: NodeId, bytes: u64) {
        let i = node.index();
        if self.readers[i] > 0 {
            self.bytes[i] = bytes;
            self.held += 1;
            self.held_bytes += bytes;
            if let Some(bytes_bound) = self.held_limit.as_mut().and_then(|b| b.bytes.as_mut()) {
                bytes_bound.held += bytes;
            }
            // What is in memory now, before anything spills to make room.
            self.peak_bytes = self.peak_bytes.max(self.held_bytes);
        }
    }

    /// Spills until the results in memory and those the running tasks will
    /// give fit the limit (when they can).
    pub(super) fn keep_within_limit(&mut self, spill: &mut Vec<NodeId>) {
        let (Some(memory), Some(sizes)) = (&self.memory, &self.sizes) else {
            return;
        };
        let room = memory
            .limit
            .saturating_sub(sizes.running_bytes + memory.sending);
        if self.limited_bytes() > room {
            self.spill_down_to(room, None, spill);
        }
    }

    /// Spills the held results in memory that are needed latest (by the
    /// rank of their next reader), none that a running task reads or that
    /// `keep` reads, until at most `room` bytes are in memory.
    pub(super) fn spill_down_to(
        &mut self,
        room: u64,
        keep: Option<NodeId>,
        spill: &mut Vec<NodeId>,
    ) {
        let Some(memory) = &self.memory else {
            return;
        };
        let mut kept = FixedBitSet::with_capacity(self.n_tasks);
        if let Some(node) = keep.filter(|node| node.index() < self.n_tasks) {
            kept.extend(self.data.dependencies(node).iter().map(|dep| dep.index()));
        }
        // Every result in memory that may go, by the rank of the next task
        // here that reads it: the latest first.
        let mut victims: Vec<(u32, NodeId)> = (0..self.n_tasks)
            .filter(|&d| {
                self.readers[d] > 0
                    && memory.pins[d] == 0
                    && !memory.spilled.contains(d)
                    && !memory.unspillable.contains(d)
                    && !kept.contains(d)
                    && self.bytes[d] > 0
            })
            .map(|d| {
                let node = NodeId::new(d);
                let next = self
                    .data
                    .dependents(node)
                    .iter()
                    .filter(|r| self.runs.contains(r.index()) && !self.started.contains(r.index()))
                    .map(|r| self.ranks[r.index()])
                    .min()
                    .unwrap_or(u32::MAX);
                (next, node)
            })
            .collect();
        victims.sort_unstable_by(|a, b| b.cmp(a));
        let memory = self.memory.as_mut().expect("under a memory limit");
        for (_, node) in victims {
            if self.held_bytes - memory.unspillable_bytes <= room {
                break;
            }
            let d = node.index();
            memory.spilled.insert(d);
            memory.spilled_bytes += self.bytes[d];
            self.held_bytes -= self.bytes[d];
            spill.push(node);
        }
    }

    /// Takes back the spilling of `node`, which the executor could not carry
    /// out (its result cannot be written, say): the result stays in memory,
    /// counted there again ([`Scheduler::peak_bytes`]), and is never chosen
    /// to spill again. The limit then bounds the other results: tasks start
    /// as though it were not there, so that the run goes on over the limit
    /// rather than stop. Does nothing for a node that is not spilled.
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::scheduler::{Scheduler, SchedulerConfig};
    ///
    /// // 0 -> 2 <- 1 under a limit of 10 bytes: with 0's 8 bytes held, 1's
    /// // 8 more make the scheduler spill 0.
    /// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 3], &[0, 1, 2]);
    /// config.memory_limit = Some(10);
    /// config.expected_bytes = &[Some(8), Some(8), Some(1)];
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(1))));
    /// assert_eq!(spill, [NodeId::new(0)]);
    /// // 0 cannot be written: it stays and counts, over the limit, which
    /// // now bounds the rest (1's 8 bytes fit it).
    /// scheduler.unspillable(NodeId::new(0));
    /// spill.clear();
    /// scheduler.finished(NodeId::new(1), 8, &mut freed, &mut spill).unwrap();
    /// assert!(spill.is_empty());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(2))));
    /// assert_eq!((scheduler.peak_bytes(), scheduler.spilled_bytes()), (16, 0));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn unspillable(&mut self, node: NodeId) {
        let Some(memory) = &mut self.memory else {
            return;
        };
        let d = node.index();
        if d >= self.n_tasks || !memory.spilled.contains(d) {
            return;
        }
        memory.spilled.set(d, false);
        memory.unspillable.insert(d);
        memory.unspillable_bytes += self.bytes[d];
        memory.spilled_bytes -= self.bytes[d];
        self.held_bytes += self.bytes[d];
        self.peak_bytes = self.peak_bytes.max(self.held_bytes);
    }
}
