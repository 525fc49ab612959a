//! `Grouped`: the members of each group, group after group, by a counting
//! sort.

/// The members of each group, group after group: item `i` (`0..n`) is in
/// group `group_of[i]`, and each group's members come in increasing order.
/// Made by a counting sort, in O(n + groups), in two vectors.
///
/// # Example
///
/// ```
/// use graph_core::Grouped;
///
/// let grouped = Grouped::new(&[1, 0, 1, 2], 3);
/// assert_eq!(grouped.group(0), [1]);
/// assert_eq!(grouped.group(1), [0, 2]);
/// assert_eq!(grouped.group(2), [3]);
/// assert_eq!(grouped.len(), 3);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grouped {
    /// Where each group's members start in `members`; one more entry than
    /// groups.
    starts: Vec<u32>,
    members: Vec<u32>,
}

impl Grouped {
    /// Groups the items `0..group_of.len()` into `groups` groups, item `i`
    /// into `group_of[i]`.
    ///
    /// Items are numbered as a [`Topology`](crate::Topology)'s nodes are,
    /// below 2^32.
    ///
    /// # Panics
    ///
    /// If a group number is `groups` or more.
    pub fn new(group_of: &[u32], groups: usize) -> Grouped {
        let mut starts = vec![0_u32; groups + 1];
        for &group in group_of {
            starts[group as usize + 1] += 1;
        }
        for g in 0..groups {
            starts[g + 1] += starts[g];
        }
        let mut fill = starts.clone();
        let mut members = vec![0_u32; group_of.len()];
        for (item, &group) in group_of.iter().enumerate() {
            let at = &mut fill[group as usize];
            members[*at as usize] = item as u32;
            *at += 1;
        }
        Grouped { starts, members }
    }

    /// The members of group `g`, in increasing order.
    pub fn group(&self, g: usize) -> &[u32] {
        &self.members[self.starts[g] as usize..self.starts[g + 1] as usize]
    }

    /// How many groups there are.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every member, group after group.
    pub fn members(&self) -> &[u32] {
        &self.members
    }
}

#[cfg(test)]
mod tests {
    use super::Grouped;

    #[test]
    fn every_item_is_in_its_group_once_in_order_and_empty_groups_are_empty() {
        // A spread of groups, some empty, from a small linear congruence.
        let groups = 11;
        let group_of: Vec<u32> = (0..200_u32).map(|i| (i * 37 + 11) % 5 * 2).collect();
        let grouped = Grouped::new(&group_of, groups as usize);
        assert_eq!(grouped.len(), groups as usize);
        for g in 0..groups {
            let want: Vec<u32> = (0..200).filter(|&i| group_of[i as usize] == g).collect();
            assert_eq!(grouped.group(g as usize), want, "group {g}");
        }
        assert_eq!(grouped.members().len(), 200);
        assert!(grouped.group(1).is_empty(), "odd groups get nothing here");
        assert!(Grouped::new(&[], 0).is_empty());
    }
}
