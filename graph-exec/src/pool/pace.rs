//! How many tasks a worker takes at once.

use std::time::{Duration, Instant};

/// A task quicker than this is quick: a worker whose tasks are takes them a
/// batch at a time, the lock taken once for several. A slower one makes it
/// take one at a time, leaving the rest to idle workers; for a task this
/// long, the lock taken once rather than a few times is a saving too small
/// to hold back work for.
pub const QUICK_TASK: Duration = Duration::from_micros(20);

/// How many tasks a worker takes at once: one, until its tasks have shown
/// themselves quick ([`QUICK_TASK`] each), then up to the pool's batch.
///
/// A worker times its batches in one of two ways. [`Pace::ended`] looks at
/// the clock once a batch, from the end of the one before (which counts the
/// time at the lock too): cheap enough for tasks of a fraction of a
/// microsecond. [`Pace::timed`] takes the time a batch took from its start,
/// for a worker that also looks after each task whether the batch has
/// grown slow ([`Pace::slow`]) and hands back the rest.
///
/// ```
/// use std::time::{Duration, Instant};
/// use graph_exec::pool::Pace;
///
/// let mut pace = Pace::new(16);
/// assert_eq!(pace.size(), 1);
/// pace.timed(Instant::now(), 4); // four tasks in no time: quick
/// assert_eq!(pace.size(), 16);
/// pace.timed(Instant::now() - Duration::from_millis(5), 4);
/// assert_eq!(pace.size(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Pace {
    most: usize,
    size: usize,
    /// When the last batch timed by [`Pace::ended`] ended.
    last: Option<Instant>,
}

impl Pace {
    /// A pace of batches of at most `most` tasks (1: one at a time, always,
    /// as one worker follows an order exactly), starting at one.
    pub fn new(most: usize) -> Pace {
        Pace {
            most: most.max(1),
            size: 1,
            last: None,
        }
    }

    /// How many tasks to take next.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether batches are timed at all: with room for more than one task.
    pub fn batches(&self) -> bool {
        self.most > 1
    }

    /// After a batch of `ran` tasks: times it from the end of the batch
    /// before, where there was `plenty` to take (else the size did not
    /// matter, and the next batch starts the clock again).
    pub fn ended(&mut self, ran: usize, plenty: bool) {
        if !self.batches() || !plenty {
            self.last = None;
            return;
        }
        let now = Instant::now();
        if let Some(before) = self.last {
            self.size = self.quick(now - before, ran);
        }
        self.last = Some(now);
    }

    /// After a batch begun at `started` that ran `ran` tasks.
    pub fn timed(&mut self, started: Instant, ran: usize) {
        if self.batches() {
            self.size = self.quick(started.elapsed(), ran);
        }
    }

    /// Whether a batch begun at `started` has taken too long for the `ran`
    /// tasks it has run to count as quick: the worker should hand back the
    /// rest.
    pub fn slow(started: Instant, ran: usize) -> bool {
        started.elapsed() >= QUICK_TASK * ran as u32
    }

    fn quick(&self, took: Duration, ran: usize) -> usize {
        if took < QUICK_TASK * ran as u32 {
            self.most
        } else {
            1
        }
    }
}
