//! `RankSet`: a set of ranks `0..n` that finds its smallest member in a few
//! word operations, for the ready tasks of a run that follows an order.

/// A set of integers below a fixed bound, kept as a hierarchy of bit sets:
/// level 0 holds one bit per rank, and each level above one bit per word of
/// the level below, set while that word is not empty. Inserting and removing
/// touch one word per level that changes; the smallest member is found by
/// walking down from the top, one word per level.
///
/// Against a binary heap of the ready tasks (what an executor without a
/// total order needs), this costs no comparisons and almost no cache misses:
/// at 10^6 ranks the hierarchy has four levels, the upper three a few
/// kilobytes.
#[derive(Clone, Debug)]
pub(crate) struct RankSet {
    /// `levels[0]` is one bit per rank; `levels[k + 1]` one bit per word of
    /// `levels[k]`. The last level has at most [`TOP_WORDS`] words.
    levels: Vec<Vec<u64>>,
}

/// The most words of the top level, scanned one by one.
const TOP_WORDS: usize = 8;

impl RankSet {
    /// An empty set of ranks below `n`.
    pub(crate) fn new(n: usize) -> RankSet {
        let mut levels = vec![vec![0_u64; n.div_ceil(64).max(1)]];
        while levels.last().expect("one level at least").len() > TOP_WORDS {
            let below = levels.last().expect("one level at least").len();
            levels.push(vec![0_u64; below.div_ceil(64)]);
        }
        RankSet { levels }
    }

    /// Adds `rank`.
    pub(crate) fn insert(&mut self, rank: usize) {
        let mut at = rank;
        for level in &mut self.levels {
            let word = &mut level[at / 64];
            let was_empty = *word == 0;
            *word |= 1 << (at % 64);
            if !was_empty {
                return;
            }
            at /= 64;
        }
    }

    /// Removes `rank`.
    pub(crate) fn remove(&mut self, rank: usize) {
        let mut at = rank;
        for level in &mut self.levels {
            let word = &mut level[at / 64];
            *word &= !(1 << (at % 64));
            if *word != 0 {
                return;
            }
            at /= 64;
        }
    }

    /// The smallest member.
    pub(crate) fn first(&self) -> Option<usize> {
        let top = self.levels.last().expect("one level at least");
        // A word index of each level is a bit index of the level above.
        let mut at = top.iter().position(|&word| word != 0)?;
        for level in self.levels.iter().rev() {
            at = at * 64 + level[at].trailing_zeros() as usize;
        }
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::RankSet;

    /// Against a `BTreeSet`, through a seeded sequence of inserts and
    /// removes over sizes that give one to four levels.
    #[test]
    fn agrees_with_an_ordered_set() {
        for n in [1, 63, 64, 65, 600, 4096 + 7, 70_000, 300_000] {
            let mut ours = RankSet::new(n);
            let mut oracle = BTreeSet::new();
            let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ n as u64;
            for _ in 0..20_000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let rank = (state % n as u64) as usize;
                if state >> 60 < 9 {
                    ours.insert(rank);
                    oracle.insert(rank);
                } else if let Some(&smallest) = oracle.first() {
                    // Remove the smallest half the time, as an executor does.
                    let victim = if state >> 63 == 0 { smallest } else { rank };
                    ours.remove(victim);
                    oracle.remove(&victim);
                }
                assert_eq!(ours.first(), oracle.first().copied(), "n = {n}");
            }
        }
    }
}
