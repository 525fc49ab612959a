//! `Losses`: how many lost processes a run may go on without, and the ones
//! it has gone on without so far.

use crate::Error;

/// The processes a run has lost, against the number it may lose: the one
/// rule by which a run that recovers ([`Run::recover`](crate::Run::recover),
/// or a supervisor of worker processes such as `taskgraph run --processes`)
/// decides whether it goes on after a loss.
///
/// A run allowed `retries` losses goes on after each of its first
/// `retries`, and stops at the next with [`Error::TooManyLosses`].
///
/// # Example
///
/// ```
/// use graph_distributed::Error;
/// use graph_distributed::recovery::Losses;
///
/// let mut losses = Losses::new(1);
/// assert!(losses.allow_another());
/// losses.lose([2])?;
/// assert!(!losses.allow_another());
/// assert!(matches!(losses.lose([0]), Err(Error::TooManyLosses { retries: 1, .. })));
/// assert_eq!(losses.lost(), [2, 0]);
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    retries: usize,
    lost: Vec<usize>,
}

impl Losses {
    /// No loss yet, of the `retries` a run may go on after.
    pub fn new(retries: usize) -> Losses {
        Losses {
            retries,
            lost: Vec::new(),
        }
    }

    /// Whether the run may go on after one loss more.
    pub fn allow_another(&self) -> bool {
        self.lost.len() < self.retries
    }

    /// Counts the loss of `processes` (by their numbers in the first
    /// attempt).
    ///
    /// # Errors
    ///
    /// [`Error::TooManyLosses`], naming every process lost, once they are
    /// more than the run may lose: the run stops.
    pub fn lose(&mut self, processes: impl IntoIterator<Item = usize>) -> Result<(), Error> {
        self.lost.extend(processes);
        if self.lost.len() > self.retries {
            return Err(Error::TooManyLosses {
                lost: self.lost.clone(),
                retries: self.retries,
            });
        }
        Ok(())
    }

    /// The processes lost, in the order they were lost.
    pub fn lost(&self) -> &[usize] {
        &self.lost
    }

    /// How many losses the run may go on after.
    pub fn retries(&self) -> usize {
        self.retries
    }
}
